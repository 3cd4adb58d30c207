"""Load the demo estate through the real services (`python manage.py load_demo`).

The seed scenarios, written in `scenarios.yaml`: a collections hardship case (`account-17`),
a warehouse pick whose remembered bay was superseded by a move (`P17`), and a card dispatch
whose delivery address changed twice (`customer-1042`). Everything goes through the services
the API uses — the contracts loader, the sandbox owner system, the evidence ledger, memory
admission and the reconcile protocol — so the demo shows the product, not a fixture.

Idempotent: each piece is written only when it is missing (people and the agent by name,
sandbox records by source/subject/field, evidence and memories by their fixed ids), and the
first batch of reconciliations is issued only while no snapshot exists at all. The whole load
is one transaction, so an interrupted run leaves nothing half-written for the next to skip.
Times are relative to the moment of loading: the sandbox vouches for its reads as of now, and
the evidence and memories sit in the recent past before it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from reconcile_app.choices import Role
from reconcile_app.demo.scenarios import SeedReconcile, scenarios_read
from reconcile_app.errors import DomainError
from reconcile_app.models import (
    ContractAction,
    DecisionSnapshot,
    EvidenceEntry,
    MemoryRecord,
    Principal,
)
from reconcile_app.reconciliation.types import Claim
from reconcile_app.services.contracts import LoadReport, contracts_load
from reconcile_app.services.evidence import evidence_append
from reconcile_app.services.memory import memory_admit
from reconcile_app.services.principals import (
    capabilities_grant,
    principal_create,
    user_create,
)
from reconcile_app.services.reconcile import ReconcileRequest, snapshot_issue
from sandbox_app.models import SandboxEvent, SandboxRecord
from sandbox_app.services import (
    sandbox_authority_write,
    sandbox_event_append,
    sandbox_fault_add,
    sandbox_record_write,
)

ESTATE_DIR = Path(__file__).resolve().parent / "estate"
AGENT_NAME = "demo-agent"
PEOPLE: tuple[tuple[str, str], ...] = (
    ("olivia", Role.OPERATOR),
    ("rhys", Role.REVIEWER),
    ("ada", Role.AUDITOR),
)


def demo_password(username: str) -> str:
    """Demo logins are printed by `./dev up`; they protect nothing but a demo database."""
    return f"demo-{username}"


@dataclass
class DemoReport:
    contracts: LoadReport
    agent: Principal
    agent_key: str | None  # only when this load created the agent: the key exists once
    people_created: list[str] = field(default_factory=list)
    records_created: int = 0
    evidence_created: int = 0
    memories_created: int = 0
    batch: list[tuple[str, DecisionSnapshot]] = field(default_factory=list)


# Beyond the demo contracts' actions, the demo agent vouches for the ledgers its work relies
# on and keeps the eval baselines (docs/api.md: attest:SOURCE, fact:PATTERN) — and nothing else.
AGENT_EXTRA_CAPABILITIES = (
    "attest:case-ledger",
    "attest:warehouse-event-ledger",
    "attest:customer-master",
    "fact:baseline.*",
)


def _agent_ensure(decision_classes: set[str]) -> tuple[Principal, str | None]:
    """The demo agent may do every action of the demo's decision classes, and nothing else.

    An agent from an earlier load gains the capabilities it lacks (the key is not shown
    again: it exists once).
    """
    capabilities = [
        f"{decision_class}:{action}"
        for decision_class, action in ContractAction.objects.filter(
            contract__decision_class__in=decision_classes
        )
        .values_list("contract__decision_class", "name")
        .order_by("contract__decision_class", "name")
        .distinct()
    ] + list(AGENT_EXTRA_CAPABILITIES)
    agent = Principal.objects.filter(name=AGENT_NAME).first()
    if agent is None:
        return principal_create(name=AGENT_NAME, capabilities=capabilities)
    capabilities_grant(principal=agent, capabilities=capabilities)
    return agent, None


def _claim(memory: MemoryRecord) -> Claim:
    return Claim(
        subject=memory.subject,
        field=memory.field,
        value=memory.value,
        written_at=memory.written_at,
        memory_class=memory.memory_class,
        purpose=memory.purpose,
        derived_from=tuple(memory.derived_from),
        note=memory.note,
        # Recalled, so the record joins the snapshot's lineage (its blast radius lists it).
        memory_id=memory.memory_id,
    )


def _batch_issue(
    agent: Principal, batch: tuple[SeedReconcile, ...]
) -> list[tuple[str, DecisionSnapshot]]:
    wanted = {memory_id for item in batch for memory_id in item.claims}
    memories = {m.memory_id: m for m in MemoryRecord.objects.filter(memory_id__in=wanted)}
    issued = []
    for item in batch:
        if item.fault is not None:
            sandbox_fault_add(
                source=item.fault.source, kind=item.fault.kind, count=1, seconds=item.fault.seconds
            )
        request = ReconcileRequest(
            subject=item.subject,
            purpose=item.purpose,
            decision_class=item.decision_class,
            proposed_action=item.proposed_action,
            proposed_value=item.proposed_value,
            claims=[_claim(memories[memory_id]) for memory_id in item.claims],
        )
        issued.append((item.label, snapshot_issue(principal=agent, request=request)))
    return issued


def demo_estate_load(*, now: datetime | None = None) -> DemoReport:
    """Load whatever of the demo estate is missing; see the module docstring."""
    now = now or timezone.now()
    scenarios = scenarios_read()
    with transaction.atomic():
        contracts = contracts_load(paths=[str(ESTATE_DIR)])
        if contracts.refused:
            # The batch below needs every demo class live: stop, with the gates' verdict.
            raise DomainError(
                "the demo contracts' release gates failed: "
                + "; ".join(item.detail for item in contracts.refused),
                code="release_gate_failed",
                status=409,
            )
        agent, key = _agent_ensure({item.decision_class for item in scenarios.batch})
        report = DemoReport(contracts=contracts, agent=agent, agent_key=key)

        for username, role in PEOPLE:
            if not User.objects.filter(username=username).exists():
                user_create(username=username, roles=[role], password=demo_password(username))
                report.people_created.append(username)

        for record in scenarios.records:
            if not SandboxRecord.objects.filter(
                source=record.source, subject=record.subject, field=record.field
            ).exists():
                sandbox_record_write(
                    source=record.source,
                    subject=record.subject,
                    field=record.field,
                    value=record.value,
                    version=record.version,
                    valid_from=now - record.age,
                )
                report.records_created += 1

        present = set(
            EvidenceEntry.objects.filter(
                evidence_id__in=[entry.id for entry in scenarios.evidence]
            ).values_list("evidence_id", flat=True)
        )
        for entry in scenarios.evidence:
            if entry.id not in present:
                evidence_append(
                    kind=entry.kind,
                    subject=entry.subject,
                    field=entry.field,
                    value=entry.value,
                    source=entry.source,
                    observed_at=now - entry.age,
                    note=entry.note,
                    evidence_id=entry.id,
                )
                report.evidence_created += 1

        present = set(
            MemoryRecord.objects.filter(
                memory_id__in=[memory.id for memory in scenarios.memories]
            ).values_list("memory_id", flat=True)
        )
        for memory in scenarios.memories:
            if memory.id not in present:
                memory_admit(
                    agent=agent,
                    memory_class=memory.memory_class,
                    subject=memory.subject,
                    purpose=memory.purpose,
                    field=memory.field,
                    value=memory.value,
                    derived_from=[memory.derived_from],
                    written_at=now - memory.age,
                    note=memory.note,
                    memory_id=memory.id,
                )
                report.memories_created += 1

        for event in scenarios.events:
            if not SandboxEvent.objects.filter(source=event.source, event_id=event.id).exists():
                sandbox_event_append(
                    source=event.source,
                    event_id=event.id,
                    type=event.type,
                    subject=event.subject,
                    seq=event.seq,
                    valid_from=now - event.age,
                )
        for authority in scenarios.authorities:
            sandbox_authority_write(
                source=authority.source,
                fact_key=authority.fact_key,
                owner=authority.owner,
                source_revision=authority.source_revision,
            )
        present = set(
            MemoryRecord.objects.filter(
                memory_id__in=[fact.id for fact in scenarios.facts]
            ).values_list("memory_id", flat=True)
        )
        for fact in scenarios.facts:
            if fact.id not in present:
                memory_admit(
                    agent=agent,
                    memory_class="operational",
                    subject=fact.subject,
                    purpose=fact.purpose,
                    fact_key=fact.fact_key,
                    value=fact.value,
                    owner=fact.owner,
                    source_revision=fact.source_revision,
                    valid_until=date.fromisoformat(fact.valid_until) if fact.valid_until else None,
                    supersedes=fact.supersedes,
                    derived_from=[fact.derived_from],
                    written_at=now - fact.age,
                    note=fact.note,
                    memory_id=fact.id,
                )
                report.memories_created += 1

        # The batch is the estate's history: issue it once, on an empty database, never on
        # top of decisions people have made since.
        if not DecisionSnapshot.objects.exists():
            report.batch = _batch_issue(agent, scenarios.batch)
    return report
