"""The drill's estate and the inputs both arms of a trial receive (seed 000's test suite).

Every trial builds its own world: a fresh subject in the drill's own sandbox sources, the
owner's records, the evidence ledger's entries and the agent's remembered claim, all written
through the real services. The protocol and the baseline each get an identical copy (their
own subject), so neither arm's effects change what the other sees.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from reconcile_app.models import Principal
from reconcile_app.reconciliation.types import Claim
from reconcile_app.services.contracts import contracts_load
from reconcile_app.services.evidence import evidence_append
from reconcile_app.services.principals import principal_create
from sandbox_app.services import (
    sandbox_fault_add,
    sandbox_faults_clear,
    sandbox_record_write,
)

ESTATE_DIR = Path(__file__).resolve().parent / "estate"
CASE_SOURCE = "drill-case-service"
COMPLAINTS_SOURCE = "drill-complaints-service"
DECISION_CLASS = "drill-collections-release"
PURPOSE = "collections"
FIELD = "collections_status"
AGENT_NAME = "drill-agent"
INITIAL_VERSION = 42
MEMORY_CLASS = "episodic"


@dataclass(frozen=True)
class Observation:
    """An evidence entry of the scenario: a value some source observed `age` ago."""

    value: str
    age: timedelta
    source: str = "case-ledger"
    note: str = ""


@dataclass(frozen=True)
class Scenario:
    """One row of seed 000's failure-injection suite, as data both arms interpret.

    `premise_supported`: at decision time the remembered premise is the owner's current,
    fresh, evidenced and uncontested state. `safe_at_commit`: acting is still right when the
    effect reaches the owner. `hazards` names the failures the scenario exposes an arm to
    (`stale`, `unsupported`, `duplicate`, `silent`); rates are taken over exposed trials.
    """

    name: str
    title: str
    state: str
    state_age: timedelta
    evidence: tuple[Observation, ...]
    claim_value: str
    claim_age: timedelta
    action: str
    resulting_value: str
    premise_supported: bool
    safe_at_commit: bool
    hazards: frozenset[str] = frozenset()
    claim_from: int = 0  # which evidence entry the memory was derived from
    revoke_support: bool = False
    fault_before_decision: tuple[str, int] | None = None  # (kind, seconds)
    change_before_commit: str | None = None  # an out-of-band write between policy and commit
    fault_before_commit: str | None = None
    also_before_commit: tuple[str, ...] = ()  # more faults for the commit, each firing once
    retry: str = ""  # "" | "same" (identical request again) | "other_body" (same key reused)
    retry_body: tuple[str, str] = ("release_collections_hold", "collect")


@dataclass
class World:
    scenario: Scenario
    subject: str
    evidence_ids: list[str] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)


def drill_estate_ensure() -> Principal:
    """Load the drill's sources and contract (idempotent) and return the drill agent."""
    contracts_load(paths=[str(ESTATE_DIR)])
    agent = Principal.objects.filter(name=AGENT_NAME).first()
    if agent is None:
        # The key is discarded: the drill calls the services in-process as this principal.
        agent, _ = principal_create(
            name=AGENT_NAME,
            capabilities=[
                f"{DECISION_CLASS}:release_collections_hold",
                f"{DECISION_CLASS}:retain_manual_review",
            ],
        )
    return agent


def world_prepare(*, scenario: Scenario, subject: str, now: datetime) -> World:
    """Write the scenario's world for one arm: owner records, evidence, the remembered claim."""
    world = World(scenario=scenario, subject=subject)
    sandbox_record_write(
        source=CASE_SOURCE,
        subject=subject,
        field=FIELD,
        value=scenario.state,
        version=INITIAL_VERSION,
        valid_from=now - scenario.state_age,
    )
    sandbox_record_write(
        source=COMPLAINTS_SOURCE,
        subject=subject,
        field="complaint_status",
        value="none",
        valid_from=now - timedelta(days=30),
    )
    for observation in scenario.evidence:
        entry = evidence_append(
            kind="observation",
            subject=subject,
            field=FIELD,
            value=observation.value,
            source=observation.source,
            observed_at=now - observation.age,
            note=observation.note or f"drill {scenario.name}",
        )
        world.evidence_ids.append(entry.evidence_id)
    support = world.evidence_ids[scenario.claim_from]
    if scenario.revoke_support:
        evidence_append(
            kind="correction",
            subject=subject,
            field=FIELD,
            source="case-ledger",
            observed_at=now,
            revokes=support,
            note="drill: the supporting document was found invalid and is revoked",
        )
    world.claims.append(
        Claim(
            subject=subject,
            field=FIELD,
            value=scenario.claim_value,
            written_at=now - scenario.claim_age,
            memory_class=MEMORY_CLASS,
            purpose=PURPOSE,
            derived_from=(support,),
            note=f"drill {scenario.name}: remembered {FIELD} = {scenario.claim_value}",
        )
    )
    return world


def fault_inject(kind: str | None, seconds: int = 0, *, once: bool = True) -> None:
    """A fault on the drill's case service: fires once, or until `faults_clear`.

    A fault meant for a read stays until cleared: a Celery worker reading the source back
    for an earlier trial must not use it up before the reconcile it was injected for. A
    fault meant for a commit fires once (only a command consumes it; readbacks never do).
    """
    if kind:
        sandbox_fault_add(source=CASE_SOURCE, kind=kind, count=1 if once else None, seconds=seconds)


def commit_faults_inject(scenario: Scenario) -> None:
    """The faults a scenario sets for its commit (each fires once, on the next command)."""
    for kind in (scenario.fault_before_commit, *scenario.also_before_commit):
        fault_inject(kind)


def change_out_of_band(*, world: World, value: str, now: datetime) -> None:
    """Someone else changes the owner's record (and the ledger records why)."""
    sandbox_record_write(source=CASE_SOURCE, subject=world.subject, field=FIELD, value=value)
    evidence_append(
        kind="observation",
        subject=world.subject,
        field=FIELD,
        value=value,
        source="case-ledger",
        observed_at=now,
        note=f"drill: changed to {value} between policy evaluation and commit",
    )


def faults_clear() -> None:
    """Leave no unfired fault behind for the next trial (the sources are the drill's own)."""
    sandbox_faults_clear(source=CASE_SOURCE)
    sandbox_faults_clear(source=COMPLAINTS_SOURCE)


@dataclass
class ArmResult:
    """What one arm did in one trial, and (filled in by the suite) what the owner saw."""

    arm: str
    scenario: str
    subject: str
    decision: str = ""  # allow | deny | escalate | refuse (the baseline's: from memory)
    reasons: list[str] = field(default_factory=list)
    verdicts: list[str] = field(default_factory=list)
    authorised: bool = False
    believed_success: bool = False
    expected_value: object = None  # what the owner should hold if the arm's belief is right
    steps: list[str] = field(default_factory=list)
    snapshot_ids: list[str] = field(default_factory=list)
    effect_keys: list[str] = field(default_factory=list)
    reconcile_ms: list[float] = field(default_factory=list)
    unknown_outcomes: int = 0
    resolution_ms: list[float] = field(default_factory=list)
    # The oracle: read from the owner after the arm has finished, never from the arm.
    executions: int = 0
    final_value: object = None
    replays: list[dict[str, object]] = field(default_factory=list)
