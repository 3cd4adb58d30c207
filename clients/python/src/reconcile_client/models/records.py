"""Memories, facts, evidence, escalations and the caller's profile."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal

from reconcile_client.models._parse import OWN, Json, day, instant, strs


@dataclass(frozen=True)
class Memory:
    """A remembered belief, with its derivation and status: it advises, never authorises."""

    memory_id: str
    memory_class: str
    subject: str
    purpose: str
    field: str
    fact_key: str
    value: Any
    derived_from: tuple[str, ...]
    status: str
    agent: str = ""
    note: str = ""
    owner: str | None = None
    source_revision: str = ""
    valid_until: date | None = None
    supersedes: str | None = None
    promotion_escalation_id: str | None = None
    written_at: datetime | None = None
    recorded_at: datetime | None = None
    raw: Json = dataclasses.field(default_factory=dict, repr=False, compare=False, metadata=OWN)

    @classmethod
    def from_json(cls, data: Json) -> Memory:
        return cls(
            memory_id=data["memory_id"],
            memory_class=data["memory_class"],
            subject=data["subject"],
            purpose=data.get("purpose", ""),
            field=data.get("field", ""),
            fact_key=data.get("fact_key", ""),
            value=data.get("value"),
            derived_from=strs(data.get("derived_from")),
            status=data["status"],
            agent=data.get("agent", ""),
            note=data.get("note", ""),
            owner=data.get("owner"),
            source_revision=data.get("source_revision", ""),
            valid_until=day(data.get("valid_until")),
            supersedes=data.get("supersedes"),
            promotion_escalation_id=data.get("promotion_escalation_id"),
            written_at=instant(data.get("written_at")),
            recorded_at=instant(data.get("recorded_at")),
            raw=data,
        )


@dataclass(frozen=True)
class Fact:
    """`facts/{key}/current`: the one record the owner's rule selects (`code: ok`)."""

    code: str
    fact: Memory | None
    authority: Mapping[str, Any] | None
    candidates: tuple[str, ...]
    escalation_id: str | None
    on: date | None
    as_of: datetime | None
    # An `as_of` answer to people: the classes quarantined now among the records in force then.
    quarantined_classes: tuple[str, ...] = ()
    raw: Json = dataclasses.field(default_factory=dict, repr=False, compare=False, metadata=OWN)

    @classmethod
    def from_json(cls, data: Json) -> Fact:
        record = data.get("fact")
        return cls(
            code=data["code"],
            fact=Memory.from_json(record) if isinstance(record, Mapping) else None,
            authority=data.get("authority"),
            candidates=strs(data.get("candidates")),
            escalation_id=data.get("escalation_id"),
            on=day(data.get("on")),
            as_of=instant(data.get("as_of")),
            quarantined_classes=strs(data.get("quarantined_classes")),
            raw=data,
        )

    @property
    def value(self) -> Any:
        return self.fact.value if self.fact is not None else None


@dataclass(frozen=True)
class Evidence:
    """An entry of the append-only, hash-chained evidence ledger."""

    evidence_id: str
    seq: int
    kind: str
    subject: str
    field: str
    value: Any
    source: str
    observed_at: datetime | None
    recorded_at: datetime | None
    derived_from: tuple[str, ...]
    hash: str
    prev_hash: str = ""
    note: str = ""
    supersedes: str | None = None
    revokes: str | None = None
    recorded_by: str | None = None
    raw: Json = dataclasses.field(default_factory=dict, repr=False, compare=False, metadata=OWN)

    @classmethod
    def from_json(cls, data: Json) -> Evidence:
        return cls(
            evidence_id=data["evidence_id"],
            seq=int(data.get("seq", 0)),
            kind=data["kind"],
            subject=data["subject"],
            field=data.get("field", ""),
            value=data.get("value"),
            source=data["source"],
            observed_at=instant(data.get("observed_at")),
            recorded_at=instant(data.get("recorded_at")),
            derived_from=strs(data.get("derived_from")),
            hash=data.get("hash", ""),
            prev_hash=data.get("prev_hash", ""),
            note=data.get("note", ""),
            supersedes=data.get("supersedes"),
            revokes=data.get("revokes"),
            recorded_by=data.get("recorded_by"),
            raw=data,
        )


@dataclass(frozen=True)
class Escalation:
    """A question for people (a reviewer approves or rejects; never the one who raised it)."""

    escalation_id: str
    code: str
    status: str
    owner: str
    next_action: str
    write_allowed: bool
    fact_key: str = ""
    snapshot_id: str | None = None
    effect_key: str | None = None
    memory_id: str | None = None
    candidate_refs: tuple[str, ...] = ()
    allowed_until_resolved: tuple[str, ...] = ()
    detail: str = ""
    requested_by: str | None = None
    opened_at: datetime | None = None
    decided_at: datetime | None = None
    decided_by: str | None = None
    rationale: str = ""
    selected_ref: str = ""
    raw: Json = dataclasses.field(default_factory=dict, repr=False, compare=False, metadata=OWN)

    @classmethod
    def from_json(cls, data: Json) -> Escalation:
        return cls(
            escalation_id=data["escalation_id"],
            code=data["code"],
            status=data["status"],
            owner=data.get("owner", ""),
            next_action=data.get("next_action", ""),
            write_allowed=bool(data.get("write_allowed", False)),
            fact_key=data.get("fact_key", ""),
            snapshot_id=data.get("snapshot_id"),
            effect_key=data.get("effect_key"),
            memory_id=data.get("memory_id"),
            candidate_refs=strs(data.get("candidate_refs")),
            allowed_until_resolved=strs(data.get("allowed_until_resolved")),
            detail=data.get("detail", ""),
            requested_by=data.get("requested_by"),
            opened_at=instant(data.get("opened_at")),
            decided_at=instant(data.get("decided_at")),
            decided_by=data.get("decided_by"),
            rationale=data.get("rationale", ""),
            selected_ref=data.get("selected_ref", ""),
            raw=data,
        )


@dataclass(frozen=True)
class DecisionClass:
    decision_class: str
    active_version: str
    actions: tuple[str, ...]

    @classmethod
    def from_json(cls, data: Json) -> DecisionClass:
        return cls(
            decision_class=data["decision_class"],
            active_version=data.get("active_version", ""),
            actions=strs(data.get("actions")),
        )


@dataclass(frozen=True)
class Me:
    """Who the key is, and what it may reconcile (each class with its active version)."""

    name: str
    kind: Literal["agent", "person"]
    roles: tuple[str, ...]
    capabilities: tuple[str, ...]
    attests: tuple[str, ...]
    fact_patterns: tuple[str, ...]
    decision_classes: tuple[DecisionClass, ...]
    raw: Json = dataclasses.field(default_factory=dict, repr=False, compare=False, metadata=OWN)

    @classmethod
    def from_json(cls, data: Json) -> Me:
        return cls(
            name=data["name"],
            kind=data["kind"],
            roles=strs(data.get("roles")),
            capabilities=strs(data.get("capabilities")),
            attests=strs(data.get("attests")),
            fact_patterns=strs(data.get("fact_patterns")),
            decision_classes=tuple(
                DecisionClass.from_json(item) for item in data.get("decision_classes", ())
            ),
            raw=data,
        )
