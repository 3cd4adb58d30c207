"""A change that lands between the gate and the effect's record still stops the commit.

The gate runs before the transaction that records the effect. A quarantine of the source, a
capability taken away or another contract version activated in that interval used to be
recorded and sent all the same (a commit racing a quarantine, on PostgreSQL with two clients:
the effect recorded and sent after the quarantine's 202). Each test makes the change at that
exact point, through the gate itself, so the interleaving is forced, not hoped for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from reconcile_app.models import Contract, Effect
from reconcile_app.services.agent_access import capabilities_revoke
from reconcile_app.services.corrections import correction_create
from reconcile_app.services.effects import commit as commit_module
from reconcile_app.services.quarantine import quarantine_create
from sandbox_app.models import SandboxEffect
from tests.conftest import COLLECTIONS
from tests.reconcile_app.effects.conftest import commit, reconcile

ACTION = "release_collections_hold"


@pytest.fixture
def meanwhile(monkeypatch) -> Callable[[Callable[[], Any]], None]:
    """Run `change` once, right after the gate first passes (before the effect's record)."""

    def arm(change: Callable[[], Any]) -> None:
        gate = commit_module._authorise
        pending = [change]

        def gate_then_change(**kwargs: Any) -> Any:
            passed = gate(**kwargs)
            while pending:
                pending.pop()()
            return passed

        monkeypatch.setattr(commit_module, "_authorise", gate_then_change)

    return arm


def _nothing_sent(key: str) -> None:
    assert not Effect.objects.filter(idempotency_key=key).exists()
    assert not SandboxEffect.objects.filter(idempotency_key=key).exists()


def test_a_quarantine_of_the_source_meanwhile_holds_the_commit(
    collectible, agent, operator, meanwhile
):
    snapshot = reconcile(agent)
    meanwhile(
        lambda: quarantine_create(
            scope="source", target="case-service", reason="bad data", actor=operator.user
        )
    )
    response = commit(agent, snapshot, ACTION, "released", "held-q")
    assert (response.status_code, response.json()["code"]) == (423, "source_quarantined")
    _nothing_sent("held-q")


def test_a_capability_taken_away_meanwhile_refuses_the_commit(
    collectible, agent, operator, meanwhile
):
    snapshot = reconcile(agent)
    meanwhile(
        lambda: capabilities_revoke(
            name=agent.name,
            capabilities=[f"{COLLECTIONS}:{ACTION}"],
            reason="withdrawn",
            actor=operator.user,
        )
    )
    response = commit(agent, snapshot, ACTION, "released", "held-c")
    assert (response.status_code, response.json()["code"]) == (403, "capability_missing")
    _nothing_sent("held-c")


def test_another_version_going_live_meanwhile_refuses_the_commit(collectible, agent, meanwhile):
    snapshot = reconcile(agent)
    live = Contract.objects.get(decision_class=COLLECTIONS, status="active")
    # What an activation of another version does to this one: it is retired.
    meanwhile(lambda: Contract.objects.filter(pk=live.pk).update(status="retired"))
    response = commit(agent, snapshot, ACTION, "released", "held-v")
    assert (response.status_code, response.json()["code"]) == (409, "contract_superseded")
    _nothing_sent("held-v")


def test_a_correction_of_its_evidence_meanwhile_refuses_the_commit(
    collectible, agent, operator, meanwhile
):
    snapshot = reconcile(agent)
    assert [e["evidence_id"] for e in snapshot["evidence_manifest"]] == ["ev-collect"]
    meanwhile(
        lambda: correction_create(
            evidence_id="ev-collect", reason="wrong account", actor=operator.user
        )
    )
    response = commit(agent, snapshot, ACTION, "released", "held-t")
    assert (response.status_code, response.json()["code"]) == (409, "snapshot_tainted")
    _nothing_sent("held-t")


def test_a_change_elsewhere_meanwhile_lets_the_commit_through(
    collectible, agent, operator, meanwhile
):
    snapshot = reconcile(agent)
    meanwhile(
        lambda: quarantine_create(
            scope="source", target="warehouse-service", reason="elsewhere", actor=operator.user
        )
    )
    response = commit(agent, snapshot, ACTION, "released", "held-none")
    assert response.status_code == 201, response.content
    assert SandboxEffect.objects.filter(idempotency_key="held-none").count() == 1
