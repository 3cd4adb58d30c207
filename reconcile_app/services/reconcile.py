"""`reconcile`: bind → read → support → classify → decide → issue (DESIGN.md).

Reads from owners happen before any transaction is opened (network I/O never holds a lock);
the snapshot, its reads, verdicts, contradictions and decision receipt are then written in one
transaction, so a snapshot is either wholly there or not at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from reconcile_app.epochs import epochs_repin
from reconcile_app.errors import Conflict, Forbidden, ValidationFailed
from reconcile_app.models import (
    Contract,
    DecisionSnapshot,
    Principal,
)
from reconcile_app.reconciliation import engine
from reconcile_app.reconciliation.types import (
    NOT_PROPOSED,
    Binding,
    Claim,
    ContractSpec,
)
from reconcile_app.selectors.configuration import capable_actions, sources_named
from reconcile_app.selectors.contracts import contract_current, contract_spec
from reconcile_app.selectors.ledger import evidence_as_of, evidence_latest
from reconcile_app.services.owner_reads import read_fields
from reconcile_app.services.quarantine import quarantines_active
from reconcile_app.services.recall import ClaimDraft, claims_recall
from reconcile_app.services.snapshots import QuarantineChanged, snapshot_persist

MAX_CLAIMS = 1000


@dataclass(frozen=True)
class ReconcileRequest:
    subject: str
    purpose: str
    decision_class: str
    proposed_action: str = ""
    contract_version: str | None = None
    # A claim recalled from a memory record names it (`memory_id`) and may leave the rest out.
    claims: Sequence[Claim | ClaimDraft] = ()
    proposed_value: Any = NOT_PROPOSED


def bind(
    *,
    principal: Principal,
    request: ReconcileRequest,
    granted_actions: frozenset[str] = frozenset(),
) -> tuple[Contract, ContractSpec, frozenset[str]]:
    """Refuse what the principal may not ask: no ambient authority.

    `granted_actions` are actions a person's role grants for this one request (an operator's
    compensation, services/effects/compensation.py) beside the principal's capabilities; the
    policy still decides whether they are permitted.
    """
    capable = capable_actions(principal, request.decision_class) | granted_actions
    if not capable or (request.proposed_action and request.proposed_action not in capable):
        # With no action proposed, it holds none of the class's.
        wanted = f"{request.decision_class}:{request.proposed_action or 'ACTION'}"
        raise Forbidden(
            f"{principal.name} has no capability {wanted}",
            code="capability_missing",
            capability=wanted,
        )
    contract = contract_current(
        decision_class=request.decision_class, version=request.contract_version
    )
    spec = contract_spec(contract)
    if request.purpose != spec.purpose:
        raise Forbidden(
            f"{request.decision_class} serves purpose {spec.purpose!r}, not {request.purpose!r}",
            code="purpose_mismatch",
        )
    if request.proposed_action and request.proposed_action not in spec.actions:
        raise ValidationFailed(
            f"{request.proposed_action!r} is not an action of {spec.decision_class}@{spec.version}",
            code="unknown_action",
            actions=sorted(spec.actions),
        )
    if request.proposed_value is not NOT_PROPOSED and not request.proposed_action:
        raise ValidationFailed(
            "proposed_value binds the value of a proposed_action: name the action too",
            code="proposed_action_missing",
        )
    if len(request.claims) > MAX_CLAIMS:
        raise ValidationFailed(f"at most {MAX_CLAIMS} claims per request", code="too_many_claims")
    return contract, spec, capable


ATTEMPTS_ON_QUARANTINE_CHANGE = 3


def snapshot_issue(
    *,
    principal: Principal,
    request: ReconcileRequest,
    granted_actions: frozenset[str] = frozenset(),
    arrived: float | None = None,
) -> DecisionSnapshot:
    """Run the protocol for one request and persist the immutable snapshot. With `arrived`
    (the API request's arrival, `time.perf_counter()`), the request's time is recorded with
    it (ReconcileTiming).

    A reconcile that races a quarantine either sees it or was issued before it: if the
    quarantine view changes between the reads and the insert, the protocol runs again.
    """
    for _ in range(ATTEMPTS_ON_QUARANTINE_CHANGE):
        try:
            return _snapshot_issue_once(
                principal=principal,
                request=request,
                granted_actions=granted_actions,
                arrived=arrived,
            )
        except QuarantineChanged:
            epochs_repin()  # the copies of the quarantine view are out of date too
            continue
    # Quarantines changing under every attempt: say so rather than issue a half-seen view.
    raise Conflict(
        "quarantines kept changing while this decision was made; ask again",
        code="quarantine_changed",
    )


def _snapshot_issue_once(
    *,
    principal: Principal,
    request: ReconcileRequest,
    granted_actions: frozenset[str],
    arrived: float | None,
) -> DecisionSnapshot:
    contract, spec, capable = bind(
        principal=principal, request=request, granted_actions=granted_actions
    )
    claims = claims_recall(principal=principal, claims=request.claims)
    quarantines = quarantines_active()
    sources = sources_named({f.source for f in spec.fields})
    raw_reads = read_fields(
        spec=spec, subject=request.subject, sources=sources, quarantined=quarantines.sources
    )
    decided_at = timezone.now()
    relevant_fields = {f.name for f in spec.fields} | {
        claim.field for claim in claims if claim.subject == request.subject
    }
    evidence, ledger_seq = evidence_latest(
        subject=request.subject, fields=relevant_fields, recorded_by=decided_at
    )
    if evidence is None:
        evidence = evidence_as_of(
            subject=request.subject,
            fields=relevant_fields,
            recorded_by=decided_at,
            ledger_seq=ledger_seq,
        )
    binding = Binding(
        principal=principal.name,
        subject=request.subject,
        purpose=request.purpose,
        decision_class=request.decision_class,
        proposed_action=request.proposed_action,
        proposed_value=request.proposed_value,
    )
    outcome = engine.evaluate(
        contract=spec,
        binding=binding,
        raw_reads=raw_reads,
        evidence=evidence,
        claims=claims,
        quarantined_classes=quarantines.memory_classes,
        quarantined_memories=quarantines.memories,
        capable_actions=capable,
        valid_time=decided_at,
        recorded_time=decided_at,
        ledger_seq=ledger_seq,
    )
    return snapshot_persist(
        principal=principal,
        spec=spec,
        sources=sources,
        content=outcome.content,
        contract=contract,
        issued_at=decided_at,
        quarantine_epoch=quarantines.epoch,
        arrived=arrived,
    )
