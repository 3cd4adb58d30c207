"""A resolution (the worker's or an operator's) is recorded in the ledger on the effect's
subject, but it says what became of a command, not what the field holds: later
decisions on that subject must not read it as an observation disagreeing with the owner's
state (an open contradiction: `escalate` or `refuse` for every later reconcile)."""

from __future__ import annotations

import pytest

from reconcile_app.models import Effect, EvidenceEntry
from reconcile_app.services.effects import effect_resolve_unknown
from reconcile_app.sources import ApplyOutcome, ApplyResult
from sandbox_app.adapter import SandboxAdapter
from sandbox_app.services import sandbox_fault_add
from tests.reconcile_app.effects.conftest import SUBJECT, commit, reconcile


@pytest.fixture
def never_executed(collectible, agent, monkeypatch):
    """Committed, lost on the way: the owner never saw it and the caller timed out."""
    snapshot = reconcile(agent)
    monkeypatch.setattr(
        SandboxAdapter,
        "apply",
        lambda self, command: ApplyResult(outcome=ApplyOutcome.UNKNOWN, code="timeout"),
    )
    assert commit(agent, snapshot, "release_collections_hold", "released", "k-1").status_code == 202
    monkeypatch.undo()
    return Effect.objects.get(idempotency_key="k-1")


def assert_decided_without_contradiction(agent) -> None:
    snapshot = reconcile(agent)
    assert snapshot["contradictions"] == [], snapshot["contradictions"]
    assert snapshot["decision"]["result"] == "allow", snapshot["decision"]


def resolution_entry() -> EvidenceEntry:
    (entry,) = EvidenceEntry.objects.filter(subject=SUBJECT, note__contains="resolution")
    assert (entry.kind, entry.field) == ("observation", "")  # an observation, of no field
    assert entry.value["idempotency_key"] == "k-1"
    assert entry.value["field"] == "collections_status"
    return entry


def test_the_workers_not_executed_resolution_contradicts_nothing(never_executed, agent):
    assert effect_resolve_unknown(effect_id=never_executed.pk).status == "not_executed"

    assert resolution_entry().value == {
        "idempotency_key": "k-1",
        "field": "collections_status",
        "outcome": "not_executed",
    }
    assert_decided_without_contradiction(agent)


@pytest.mark.parametrize("outcome", ["not_executed", "succeeded"])
def test_an_operators_resolution_contradicts_nothing(never_executed, agent, operator, outcome):
    response = operator.post(
        "/api/v1/effects/k-1/resolve", {"outcome": outcome, "reason": "asked the owner"}
    )
    assert response.status_code == 200, response.content

    entry = resolution_entry()
    assert entry.note == "manual resolution: asked the owner"
    assert (entry.source, entry.value["outcome"]) == ("operator:olivia-operator", outcome)
    assert_decided_without_contradiction(agent)


def test_a_resolution_after_a_failed_postcondition_contradicts_nothing(
    collectible, agent, operator, eager_tasks, django_capture_on_commit_callbacks
):
    snapshot = reconcile(agent)
    sandbox_fault_add(source="case-service", kind="drop_postcondition", count=1)
    with django_capture_on_commit_callbacks(execute=True):
        commit(agent, snapshot, "release_collections_hold", "released", "k-1")
    assert Effect.objects.get(idempotency_key="k-1").status == "postcondition_failed"

    response = operator.post(
        "/api/v1/effects/k-1/resolve", {"outcome": "not_executed", "reason": "never landed"}
    )

    assert response.status_code == 200, response.content
    assert_decided_without_contradiction(agent)
