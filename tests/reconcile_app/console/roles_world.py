"""The world the console's roles table is checked in (test_roles.py): one of everything the
console shows, made through the real protocol."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from reconcile_app.models import Contradiction, Effect, Escalation, MemoryRecord, Quarantine
from reconcile_app.services.bulk_jobs import bulk_job_create
from reconcile_app.services.memory import memory_admit
from reconcile_app.services.quarantine import quarantine_apply, quarantine_create
from tests.reconcile_app.console.conftest import commit_effect
from tests.reconcile_app.console.contract_world import DRAFT, load_draft

LIFTABLE = "complaints-service"  # quarantined in the world, so "Lift…" is on offer
TRUSTED = "customer-master"  # trusted in the world, so "Quarantine…" is on offer


@dataclass
class World:
    """One of everything the console shows, made through the real protocol."""

    snapshot_id: str
    contradiction: Contradiction
    escalation: Escalation
    effect: Effect
    quarantine: Quarantine
    # Written by the agent into a review class: a promotion any reviewer may decide.
    suggestion: MemoryRecord
    # A bulk re-check of the unknown effect, not run yet: an operator may cancel it.
    job_id: str = ""
    # The next collections-contact-release version, loaded as a draft: a reviewer activates it.
    draft_version: str = DRAFT


@pytest.fixture
def world(estate, registry, agent, operator, make_snapshot, tmp_path) -> World:
    from tests.reconcile_app.console.conftest import ambiguous_fact

    load_draft(tmp_path)
    snapshot = make_snapshot(claimed="collect")
    effect = commit_effect(agent, "u-roles", fault="timeout_after_commit")
    assert effect.status == "unknown"
    quarantine = quarantine_create(
        scope="source", target=LIFTABLE, reason="Owner reports duplicates.", actor=operator.user
    )
    return World(
        snapshot_id=snapshot.snapshot_id,
        contradiction=Contradiction.objects.get(snapshot=snapshot),
        escalation=ambiguous_fact(agent, agent),  # raised by the agent: any reviewer decides
        effect=effect,
        quarantine=quarantine_apply(quarantine_id=quarantine.quarantine_id),
        job_id=bulk_job_create(
            actor=operator.user,
            action="readback",
            reason="Owner outage.",
            keys=[effect.idempotency_key],
        ).job_id,
        suggestion=memory_admit(
            agent=agent.principal,
            memory_class="runbooks",
            subject="account-17",
            purpose="collections",
            field="collections_status",
            value="recheck after a 412",
            derived_from=[f"snapshot:{snapshot.snapshot_id}"],
        ),
    )
