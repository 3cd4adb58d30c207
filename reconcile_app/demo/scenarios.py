"""The demo's seed scenarios (`scenarios.yaml`), read into plain, typed records.

Every `age` in the file is how long before the moment of loading: a record's valid_from,
an evidence entry's observed_at, a memory's written_at (`20m`, `4h`, `2d`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import yaml

from reconcile_app.reconciliation.types import NOT_PROPOSED

SCENARIOS_FILE = Path(__file__).resolve().parent / "scenarios.yaml"


AGE = re.compile(r"^(\d+)([mhd])$")
AGE_UNITS = {"m": "minutes", "h": "hours", "d": "days"}


def _age(text: str) -> timedelta:
    match = AGE.match(str(text))
    if match is None:
        raise ValueError(f"{SCENARIOS_FILE.name}: age {text!r} must look like 20m, 4h or 2d")
    return timedelta(**{AGE_UNITS[match.group(2)]: int(match.group(1))})


@dataclass(frozen=True)
class SeedRecord:
    source: str
    subject: str
    field: str
    value: Any
    version: int
    age: timedelta  # valid_from = now - age


@dataclass(frozen=True)
class SeedEvidence:
    id: str
    subject: str
    field: str
    value: Any
    source: str
    age: timedelta  # observed_at = now - age
    note: str = ""
    kind: str = "observation"


@dataclass(frozen=True)
class SeedMemory:
    id: str
    subject: str
    purpose: str
    field: str
    value: Any
    derived_from: str
    age: timedelta  # written_at = now - age
    note: str = ""
    # A review class's memory is a suggestion with a promotion escalation until decided.
    memory_class: str = "episodic"


@dataclass(frozen=True)
class SeedFault:
    source: str
    kind: str
    seconds: int = 0


@dataclass(frozen=True)
class SeedReconcile:
    label: str
    subject: str
    purpose: str
    decision_class: str
    proposed_action: str
    claims: tuple[str, ...]  # ids of the agent's memories it presents as claims
    fault: SeedFault | None = None  # injected (count=1) just before this reconcile
    proposed_value: Any = NOT_PROPOSED  # the value the action would write, when bound


@dataclass(frozen=True)
class SeedEvent:
    source: str
    id: str
    seq: int
    type: str
    subject: str
    age: timedelta  # valid_from = now - age


@dataclass(frozen=True)
class SeedAuthority:
    source: str
    fact_key: str
    owner: str
    source_revision: str


@dataclass(frozen=True)
class SeedFact:
    """An operational fact (seed 001): a memory with owner, revision, expiry, supersession."""

    id: str
    fact_key: str
    subject: str
    purpose: str
    value: Any
    owner: str | None
    source_revision: str
    derived_from: str
    age: timedelta
    valid_until: str | None = None
    supersedes: str | None = None
    note: str = ""


@dataclass(frozen=True)
class Scenarios:
    records: tuple[SeedRecord, ...]
    evidence: tuple[SeedEvidence, ...]
    memories: tuple[SeedMemory, ...]
    batch: tuple[SeedReconcile, ...]
    events: tuple[SeedEvent, ...] = ()
    authorities: tuple[SeedAuthority, ...] = ()
    facts: tuple[SeedFact, ...] = ()


def scenarios_read(path: Path = SCENARIOS_FILE) -> Scenarios:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))

    def aged(item: dict[str, Any]) -> dict[str, Any]:
        return {**item, "age": _age(item["age"])}

    return Scenarios(
        events=tuple(SeedEvent(**aged(item)) for item in data.get("events", [])),
        authorities=tuple(SeedAuthority(**item) for item in data.get("authorities", [])),
        facts=tuple(SeedFact(**aged(item)) for item in data.get("facts", [])),
        records=tuple(SeedRecord(**aged(item)) for item in data["records"]),
        evidence=tuple(SeedEvidence(**aged(item)) for item in data["evidence"]),
        memories=tuple(SeedMemory(**aged(item)) for item in data["memories"]),
        batch=tuple(
            SeedReconcile(
                **{
                    **item,
                    "claims": tuple(item["claims"]),
                    "fault": SeedFault(**item["fault"]) if item.get("fault") else None,
                }
            )
            for item in data["batch"]
        ),
    )
