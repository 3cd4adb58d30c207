"""A committed effect, its owner's receipt and its timeline."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from reconcile_client.models._parse import OWN, Json, instant, owner_instant, text_or_none

EffectStatus = Literal[
    "recorded",
    "sent",
    "accepted",
    "rejected",
    "unknown",
    "verified",
    "postcondition_failed",
    "not_executed",
]
# Where `wait` stops: nothing will change these without a person (`unknown` may still move).
FINAL_EFFECT_STATUSES: frozenset[str] = frozenset(
    {"verified", "postcondition_failed", "rejected", "not_executed"}
)


@dataclass(frozen=True)
class Receipt:
    """The owner's receipt for an executed command (its own idempotency key, new version).

    It is the owner's own body, passed through as stored: the server takes it as proof with
    the key, subject, field and `resulting_version`, and checks nothing else of it (an owner
    may leave out `receipt_id`, or write `committed_at` in a form of its own: None here, as
    sent in `.raw`)."""

    receipt_id: str | None
    resulting_version: int | None
    idempotency_key: str | None = None
    subject: str | None = None
    field: str | None = None
    action: str | None = None
    resulting_value: Any = None
    committed_at: datetime | None = None
    raw: Json = dataclasses.field(default_factory=dict, repr=False, compare=False, metadata=OWN)

    @classmethod
    def from_json(cls, data: Json) -> Receipt:
        return cls(
            receipt_id=text_or_none(data.get("receipt_id")),
            resulting_version=data.get("resulting_version"),
            idempotency_key=data.get("idempotency_key"),
            subject=data.get("subject"),
            field=data.get("field"),
            action=data.get("action"),
            resulting_value=data.get("resulting_value"),
            committed_at=owner_instant(data.get("committed_at")),
            raw=data,
        )


@dataclass(frozen=True)
class EffectEvent:
    """One step of an effect's timeline (recorded, sent, timeout, readback, resolution...)."""

    at: datetime | None
    kind: str
    detail: Any
    evidence_id: str
    actor: str

    @classmethod
    def from_json(cls, data: Json) -> EffectEvent:
        return cls(
            at=instant(data.get("at")),
            kind=data["kind"],
            detail=data.get("detail"),
            evidence_id=data.get("evidence_id", ""),
            actor=data.get("actor", ""),
        )


@dataclass(frozen=True)
class Effect:
    """A committed effect and where it stands. `idempotency_key` is how to ask about it
    again; `replayed` says the server answered a retry from its record."""

    idempotency_key: str
    status: EffectStatus
    receipt: Receipt | None
    snapshot_id: str
    action: str
    subject: str
    field: str
    resulting_value: Any
    expected_version: int | None
    resulting_version: int | None
    outcome: Json
    escalation_id: str | None = None
    approved_by: str | None = None
    # Who committed it (the agent's name) and the owner system the command went to.
    principal: str = ""
    source: str = ""
    decision_id: str = ""
    # How often the worker has read the owner back, and asked it what became of the command.
    readback_attempts: int = 0
    resolution_attempts: int = 0
    # An operator's compensation: the key it undoes, and the key that undid this one.
    compensates: str | None = None
    compensated_by: str | None = None
    created_at: datetime | None = None
    sent_at: datetime | None = None
    outcome_at: datetime | None = None
    verified_at: datetime | None = None
    next_check_at: datetime | None = None
    timeline: tuple[EffectEvent, ...] = ()
    replayed: bool = dataclasses.field(default=False, metadata=OWN)
    raw: Json = dataclasses.field(default_factory=dict, repr=False, compare=False, metadata=OWN)

    @classmethod
    def from_json(cls, data: Json, *, replayed: bool = False) -> Effect:
        receipt = data.get("receipt")
        return cls(
            idempotency_key=data["idempotency_key"],
            status=data["status"],
            receipt=Receipt.from_json(receipt) if isinstance(receipt, Mapping) else None,
            snapshot_id=data.get("snapshot_id", ""),
            action=data.get("action", ""),
            subject=data.get("subject", ""),
            field=data.get("field", ""),
            resulting_value=data.get("resulting_value"),
            expected_version=data.get("expected_version"),
            resulting_version=data.get("resulting_version"),
            outcome=dict(data.get("outcome") or {}),
            escalation_id=data.get("escalation_id"),
            approved_by=data.get("approved_by"),
            principal=data.get("principal", ""),
            source=data.get("source", ""),
            decision_id=data.get("decision_id", ""),
            readback_attempts=data.get("readback_attempts", 0),
            resolution_attempts=data.get("resolution_attempts", 0),
            compensates=data.get("compensates"),
            compensated_by=data.get("compensated_by"),
            created_at=instant(data.get("created_at")),
            sent_at=instant(data.get("sent_at")),
            outcome_at=instant(data.get("outcome_at")),
            verified_at=instant(data.get("verified_at")),
            next_check_at=instant(data.get("next_check_at")),
            timeline=tuple(EffectEvent.from_json(item) for item in data.get("timeline", ())),
            replayed=replayed,
            raw=data,
        )

    @property
    def final(self) -> bool:
        return self.status in FINAL_EFFECT_STATUSES

    def readback(self) -> Mapping[str, Any] | None:
        """What the latest readback found (`value`, `version`), from the timeline of an
        effect fetched with `effect()` or `wait()`; None before any readback."""
        for event in reversed(self.timeline):
            if event.kind == "readback" and isinstance(event.detail, Mapping):
                return event.detail
        return None
