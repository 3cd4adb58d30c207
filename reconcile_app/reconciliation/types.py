"""The plain data the reconciliation engine works on. No ORM objects cross this boundary."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class FieldSpec:
    name: str
    source: str
    required: bool
    max_age_seconds: int
    evidence_required: bool


@dataclass(frozen=True)
class RuleSpec:
    kind: str  # deny | escalate | allow
    expression: str
    code: str
    permits: tuple[str, ...]


@dataclass(frozen=True)
class ContractSpec:
    """An immutable contract version, as the engine needs it."""

    pk: int
    decision_class: str
    version: str
    purpose: str
    policy_version: str
    contradictions: str
    commit_window_seconds: int
    reducer: str
    content_hash: str
    fields: tuple[FieldSpec, ...]
    actions: dict[str, str]  # action -> field it writes
    rules: tuple[RuleSpec, ...]
    # action -> the values it may write (None: any value the policy allows)
    action_values: dict[str, tuple[Any, ...] | None] = field(default_factory=dict)

    def field(self, name: str) -> FieldSpec | None:
        return next((spec for spec in self.fields if spec.name == name), None)


@dataclass(frozen=True)
class FieldRead:
    """One read as it will be stored in the snapshot."""

    field: str
    source: str
    consistency: str
    status: str
    value: Any
    version: int | None
    observed_at: datetime | None
    valid_from: datetime | None
    recorded_at: datetime | None
    read_at: datetime
    detail: str = ""
    # For derived fields: the inputs the reducer computed the value from.
    inputs: dict[str, Any] | None = None
    # How the field was read: `live` from the owner, or `event_sourced` (folded from the
    # owner's events). The source's mode may change later; replay goes by this.
    mode: str = "live"


@dataclass(frozen=True)
class EvidenceView:
    evidence_id: str
    hash: str
    subject: str
    field: str
    value: Any
    source: str
    observed_at: datetime
    recorded_at: datetime
    withdrawn: bool  # revoked or superseded by an entry recorded by the cut-off


@dataclass(frozen=True)
class Claim:
    subject: str
    field: str
    value: Any
    written_at: datetime | None
    memory_class: str = ""
    purpose: str = ""
    derived_from: tuple[str, ...] = ()
    note: str = ""
    # The memory record the agent recalled this claim from (docs/api.md "Reconcile"): the
    # record joins the snapshot's lineage, and a quarantine of it quarantines the claim.
    memory_id: str = ""


class _NotProposed:
    """No value was proposed: the snapshot then binds the action, not the value it writes."""

    def __repr__(self) -> str:
        return "NOT_PROPOSED"


NOT_PROPOSED: Any = _NotProposed()


@dataclass(frozen=True)
class Binding:
    principal: str
    subject: str
    purpose: str
    decision_class: str
    proposed_action: str
    proposed_value: Any = NOT_PROPOSED

    @property
    def value_bound(self) -> bool:
        return self.proposed_value is not NOT_PROPOSED

    def effect(self) -> dict[str, Any]:
        """What policy sees of the proposed effect: `effect.action`, and `effect.value` when
        a value was proposed (test it with `has(effect.value)`)."""
        proposed: dict[str, Any] = {"action": self.proposed_action}
        if self.value_bound:
            proposed["value"] = self.proposed_value
        return proposed


@dataclass
class Outcome:
    """What the engine concluded; `content` is what the snapshot hash covers."""

    content: dict[str, Any]
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    contradictions: list[dict[str, Any]] = field(default_factory=list)
