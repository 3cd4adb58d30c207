from reconcile_app.models.audit import AuditEvent
from reconcile_app.models.contracts import (
    Contract,
    ContractAction,
    ContractActivation,
    ContractField,
    PolicyRule,
)
from reconcile_app.models.corrections import Correction, SnapshotTaint
from reconcile_app.models.effects import Effect, EffectEvent
from reconcile_app.models.epochs import ConfigurationEpoch
from reconcile_app.models.escalations import Escalation
from reconcile_app.models.evidence import EvidenceEntry, EvidenceSupport, LedgerHead
from reconcile_app.models.jobs import BulkJob, BulkJobItem
from reconcile_app.models.memory import MemoryClass, MemoryRecord, MemoryStatusEvent
from reconcile_app.models.principals import ApiKey, Capability, Principal
from reconcile_app.models.quarantine import Quarantine, QuarantineEpoch
from reconcile_app.models.snapshots import (
    ClaimVerdict,
    Contradiction,
    DecisionReceipt,
    DecisionSnapshot,
    StateRead,
)
from reconcile_app.models.sources import Source
from reconcile_app.models.timings import ReconcileTiming

__all__ = [
    "ApiKey",
    "AuditEvent",
    "BulkJob",
    "BulkJobItem",
    "Capability",
    "ClaimVerdict",
    "ConfigurationEpoch",
    "Contract",
    "ContractAction",
    "ContractActivation",
    "ContractField",
    "Contradiction",
    "Correction",
    "DecisionReceipt",
    "DecisionSnapshot",
    "Effect",
    "EffectEvent",
    "Escalation",
    "EvidenceEntry",
    "EvidenceSupport",
    "LedgerHead",
    "MemoryClass",
    "MemoryRecord",
    "MemoryStatusEvent",
    "PolicyRule",
    "Principal",
    "Quarantine",
    "QuarantineEpoch",
    "ReconcileTiming",
    "SnapshotTaint",
    "Source",
    "StateRead",
]
