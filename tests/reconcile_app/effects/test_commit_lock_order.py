"""The transaction that records an effect holds the epochs (FOR SHARE) from its start and the
ledger's head (FOR SHARE) at its end, on PostgreSQL: a change those cover, made while it is
open, waits for the record. And a change that locks rows of its own before it moves an epoch
must not hold one the record needs after the epochs: the agent's row, which the effect's
foreign key checks at commit (each waited on the other: deadlock detected, the commit a 503).

Each test pauses the commit at one point in that transaction, in this thread, and makes the
change from another, so the interleaving is forced, not hoped for."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from reconcile_app.models import Effect
from reconcile_app.services.agent_access import (
    agent_enabled_set,
    agent_key_rotate,
    capabilities_revoke,
)
from reconcile_app.services.corrections import correction_create
from reconcile_app.services.effects import commit as commit_module
from reconcile_app.services.quarantine import quarantine_create
from tests.conftest import COLLECTIONS
from tests.races import paused_race
from tests.reconcile_app.effects.conftest import commit, reconcile

ACTION = "release_collections_hold"

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]


def _race(monkeypatch, agent, point: str, change: Callable[[], Any]) -> dict[str, Any]:
    """Commit, pausing just after `point` (a step of the record's transaction) while another
    thread makes `change`. What each answered, and whether the change ended before the
    commit went on."""
    snapshot = reconcile(agent)

    def changed() -> str:
        change()
        return "done"

    seen = paused_race(
        monkeypatch,
        commit_module,
        point,
        lambda: commit(agent, snapshot, ACTION, "released", "lock-order").status_code,
        changed,
    )
    return {**seen, "commit": seen["write"]}


ACCESS_CHANGES = {
    "revoke": lambda name, actor: capabilities_revoke(
        name=name, capabilities=[f"{COLLECTIONS}:{ACTION}"], reason="withdrawn", actor=actor
    ),
    "disable": lambda name, actor: agent_enabled_set(
        name=name, enabled=False, reason="misbehaving", actor=actor
    ),
    "rotate": lambda name, actor: agent_key_rotate(name=name, reason="leaked", actor=actor),
}


@pytest.mark.parametrize("change", sorted(ACCESS_CHANGES))
def test_the_agents_access_changed_while_it_commits_waits_and_deadlocks_nothing(
    collectible, agent, operator, monkeypatch, change
):
    """The change locks the agent's row, then moves the configuration epoch, which the
    commit holds. Authorised first, the effect is recorded; the change lands after it."""
    seen = _race(
        monkeypatch,
        agent,
        "authorisation_held",
        lambda: ACCESS_CHANGES[change](agent.name, operator.user),
    )
    assert (seen["commit"], seen["change"], seen["waited"]) == (201, "done", True), seen


def test_a_quarantine_made_while_the_effect_is_recorded_waits_for_the_record(
    collectible, agent, operator, monkeypatch
):
    seen = _race(
        monkeypatch,
        agent,
        "authorisation_held",
        lambda: quarantine_create(
            scope="source", target="case-service", reason="bad data", actor=operator.user
        ),
    )
    assert (seen["commit"], seen["change"], seen["waited"]) == (201, "done", True), seen


def test_a_correction_made_while_the_effect_is_recorded_waits_for_the_record(
    collectible, agent, operator, monkeypatch
):
    seen = _race(
        monkeypatch,
        agent,
        "evidence_held",
        lambda: correction_create(
            evidence_id="ev-collect", reason="wrong account", actor=operator.user
        ),
    )
    assert (seen["commit"], seen["change"], seen["waited"]) == (201, "done", True), seen


@pytest.mark.parametrize("change", ["disable", "rotate"])
def test_access_taken_back_after_the_gate_ran_stops_the_commit(
    collectible, agent, operator, monkeypatch, change
):
    """The key opened the request and the gate authorised it; the operator took the access
    back before the record's transaction began. The gate asks what the agent may do, not
    whether it may still act: the effect used to be recorded and sent all the same."""
    seen = _race(
        monkeypatch,
        agent,
        "_authorise",
        lambda: ACCESS_CHANGES[change](agent.name, operator.user),
    )
    assert (seen["commit"], seen["change"]) == (401, "done"), seen
    assert not Effect.objects.filter(idempotency_key="lock-order").exists()
