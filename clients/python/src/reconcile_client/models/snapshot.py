"""A decision snapshot: the state read, what each claim was found to be, what it allows."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from reconcile_client._wire import UNSET, Unset
from reconcile_client.models._parse import OWN, Json, instant, strs

DecisionResult = Literal["allow", "deny", "escalate", "refuse"]
Completeness = Literal["complete", "degraded", "incomplete"]
FieldStatus = Literal["ok", "unavailable", "timeout", "stale", "quarantined", "conflict"]
Verdict = Literal[
    "confirmed",
    "superseded",
    "contradicted",
    "unverified",
    "out_of_scope",
    "stale_state",
    "quarantined",
]


@dataclass(frozen=True)
class Reason:
    code: str
    detail: str

    @classmethod
    def from_json(cls, data: Json) -> Reason:
        return cls(code=data["code"], detail=data.get("detail", ""))


@dataclass(frozen=True)
class Decision:
    result: DecisionResult
    permitted_actions: tuple[str, ...]
    reasons: tuple[Reason, ...]
    policy_version: str

    @classmethod
    def from_json(cls, data: Json) -> Decision:
        return cls(
            result=data["result"],
            permitted_actions=strs(data.get("permitted_actions")),
            reasons=tuple(Reason.from_json(item) for item in data.get("reasons", ())),
            policy_version=data.get("policy_version", ""),
        )

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(reason.code for reason in self.reasons)


@dataclass(frozen=True)
class FieldRead:
    """One state field as its owner answered it: the version is what a commit must match."""

    value: Any
    version: int | None
    source: str
    status: FieldStatus
    required: bool
    observed_at: datetime | None
    valid_from: datetime | None
    recorded_at: datetime | None
    read_at: datetime | None
    max_age_seconds: int
    consistency: str
    evidence: tuple[str, ...]
    detail: str
    # `live`, or `event_sourced` (folded from the owner's events); "" on older snapshots.
    mode: str = ""
    # An event-sourced field's: what the reducer computed the value from (None otherwise).
    inputs: Mapping[str, Any] | None = None

    @classmethod
    def from_json(cls, data: Json) -> FieldRead:
        return cls(
            value=data.get("value"),
            version=data.get("version"),
            source=data["source"],
            status=data["status"],
            required=bool(data.get("required", False)),
            observed_at=instant(data.get("observed_at")),
            valid_from=instant(data.get("valid_from")),
            recorded_at=instant(data.get("recorded_at")),
            read_at=instant(data.get("read_at")),
            max_age_seconds=int(data.get("max_age_seconds", 0)),
            consistency=data.get("consistency", ""),
            evidence=strs(data.get("evidence")),
            detail=data.get("detail", ""),
            mode=data.get("mode", ""),
            inputs=data.get("inputs"),
        )


@dataclass(frozen=True)
class ClaimVerdict:
    """What reconciliation made of one remembered claim. A verdict never authorises."""

    index: int
    verdict: Verdict
    reason: str
    evidence: tuple[str, ...]
    subject: str
    field: str
    value: Any
    memory_id: str | None = None
    # The claim as stated (or as the recalled memory holds it).
    purpose: str = ""
    memory_class: str = ""
    derived_from: tuple[str, ...] = ()
    note: str = ""
    written_at: datetime | None = None

    @classmethod
    def from_json(cls, data: Json) -> ClaimVerdict:
        return cls(
            index=int(data["index"]),
            verdict=data["verdict"],
            reason=data.get("reason", ""),
            evidence=strs(data.get("evidence")),
            subject=data.get("subject", ""),
            field=data.get("field", ""),
            value=data.get("value"),
            memory_id=data.get("memory_id"),
            purpose=data.get("purpose", ""),
            memory_class=data.get("memory_class", ""),
            derived_from=strs(data.get("derived_from")),
            note=data.get("note", ""),
            written_at=instant(data.get("written_at")),
        )


@dataclass(frozen=True)
class ContradictionSide:
    value: Any
    source: str
    ref: str

    @classmethod
    def from_json(cls, data: Json) -> ContradictionSide:
        return cls(value=data.get("value"), source=data["source"], ref=data.get("ref", ""))


@dataclass(frozen=True)
class Contradiction:
    """Two places disagreeing, both kept intact (never smoothed into one value)."""

    id: int
    kind: str
    subject: str
    field: str
    state: ContradictionSide
    other: ContradictionSide
    detail: str
    status: str
    # The first snapshot that saw it; while open, later snapshots seeing it move last_seen_at.
    snapshot_id: str = ""
    detected_at: datetime | None = None
    last_seen_at: datetime | None = None
    resolved_at: datetime | None = None
    resolved_by: str | None = None
    resolution_note: str = ""

    @classmethod
    def from_json(cls, data: Json) -> Contradiction:
        return cls(
            id=int(data["id"]),
            kind=data["kind"],
            subject=data["subject"],
            field=data["field"],
            state=ContradictionSide.from_json(data["state"]),
            other=ContradictionSide.from_json(data["other"]),
            detail=data.get("detail", ""),
            status=data.get("status", ""),
            snapshot_id=data.get("snapshot_id", ""),
            detected_at=instant(data.get("detected_at")),
            last_seen_at=instant(data.get("last_seen_at")),
            resolved_at=instant(data.get("resolved_at")),
            resolved_by=data.get("resolved_by"),
            resolution_note=data.get("resolution_note", ""),
        )


@dataclass(frozen=True)
class ActionHandle:
    """How to act on a snapshot: the field the action writes, the ready If-Match value and
    the last moment the server takes the commit."""

    field: str
    if_match: str
    commit_deadline: datetime | None

    @classmethod
    def from_json(cls, data: Json) -> ActionHandle:
        return cls(
            field=data["field"],
            if_match=data["if_match"],
            commit_deadline=instant(data.get("commit_deadline")),
        )


@dataclass(frozen=True)
class ManifestEntry:
    """An evidence entry the decision cites, with the hash it had in the chain."""

    evidence_id: str
    hash: str

    @classmethod
    def from_json(cls, data: Json) -> ManifestEntry:
        return cls(evidence_id=data["evidence_id"], hash=data.get("hash", ""))


@dataclass(frozen=True)
class Snapshot:
    """A decision: the state read, what each claim was found to be, and what it allows."""

    snapshot_id: str
    content_hash: str
    issued_at: datetime | None
    principal: str
    subject: str
    purpose: str
    decision_class: str
    proposed_action: str
    completeness: Completeness
    decision: Decision
    fields: Mapping[str, FieldRead]
    claims: tuple[ClaimVerdict, ...]
    contradictions: tuple[Contradiction, ...]
    actions: Mapping[str, ActionHandle]
    escalation_id: str | None
    contract: Mapping[str, str]
    reducer_version: str | None
    cutoffs: Mapping[str, datetime | None]
    tainted_by: tuple[str, ...]
    # UNSET unless the request bound a value (`proposed_value`): then only that one.
    proposed_value: Any | Unset = UNSET
    # How far along the evidence chain the decision read (None before content schema 5).
    ledger_seq: int | None = None
    evidence_manifest: tuple[ManifestEntry, ...] = ()
    raw: Json = dataclasses.field(default_factory=dict, repr=False, compare=False, metadata=OWN)

    @classmethod
    def from_json(cls, data: Json) -> Snapshot:
        return cls(
            snapshot_id=data["snapshot_id"],
            content_hash=data.get("content_hash", ""),
            issued_at=instant(data.get("issued_at")),
            principal=data.get("principal", ""),
            subject=data["subject"],
            purpose=data.get("purpose", ""),
            decision_class=data["decision_class"],
            proposed_action=data.get("proposed_action", ""),
            completeness=data["completeness"],
            decision=Decision.from_json(data["decision"]),
            fields={
                name: FieldRead.from_json(read) for name, read in data.get("fields", {}).items()
            },
            claims=tuple(ClaimVerdict.from_json(item) for item in data.get("claims", ())),
            contradictions=tuple(
                Contradiction.from_json(item) for item in data.get("contradictions", ())
            ),
            actions={
                name: ActionHandle.from_json(how) for name, how in data.get("actions", {}).items()
            },
            escalation_id=data.get("escalation_id"),
            contract=dict(data.get("contract") or {}),
            reducer_version=data.get("reducer_version"),
            cutoffs={name: instant(value) for name, value in (data.get("cutoffs") or {}).items()},
            tainted_by=strs(data.get("tainted_by")),
            proposed_value=data.get("proposed_value", UNSET),
            ledger_seq=data.get("ledger_seq"),
            evidence_manifest=tuple(
                ManifestEntry.from_json(item) for item in data.get("evidence_manifest", ())
            ),
            raw=data,
        )

    def authorises(self, action: str) -> bool:
        """Whether the server says how to commit `action` on this snapshot: it lists exactly
        the actions the snapshot can authorise (an approved escalation's shows on a re-read)."""
        return action in self.actions
