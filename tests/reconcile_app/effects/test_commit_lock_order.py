"""The commit holds the epochs (FOR SHARE) from its first statement to its end; a change that
locks its own rows first and then moves an epoch must not wait on a row the commit needs
after the epochs (PostgreSQL: deadlock detected, one of the two a 500)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db import connection, connections

from reconcile_app.services.agent_access import (
    agent_enabled_set,
    agent_key_rotate,
    capabilities_revoke,
)
from reconcile_app.services.effects import commit as commit_module
from tests.conftest import COLLECTIONS
from tests.reconcile_app.effects.conftest import commit, reconcile

ACTION = "release_collections_hold"

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]


CHANGES = {
    "revoke": lambda name, actor: capabilities_revoke(
        name=name, capabilities=[f"{COLLECTIONS}:{ACTION}"], reason="withdrawn", actor=actor
    ),
    "disable": lambda name, actor: agent_enabled_set(
        name=name, enabled=False, reason="misbehaving", actor=actor
    ),
    "rotate": lambda name, actor: agent_key_rotate(name=name, reason="leaked", actor=actor),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_the_agents_access_changed_while_it_commits_is_no_deadlock(
    collectible, agent, operator, monkeypatch, change
):
    """The change locks the agent's row, then moves the configuration epoch, which the
    commit holds; the commit's foreign key to the agent must not wait on that row lock.
    Authorised first, the effect is recorded; the change lands after it."""
    snapshot = reconcile(agent)
    held = threading.Event()
    real = commit_module.authorisation_held

    def held_then_pause(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        held.set()
        time.sleep(1.5)  # the revoke locks the agent's row and waits on the epochs
        return result

    monkeypatch.setattr(commit_module, "authorisation_held", held_then_pause)
    outcome: list[str] = []

    def revoke() -> None:
        try:
            held.wait(timeout=30)
            CHANGES[change](agent.name, operator.user)
            outcome.append("changed")
        except BaseException as exc:  # the finding
            outcome.append(f"change {type(exc).__name__}: {exc}")
        finally:
            connections.close_all()

    rival = threading.Thread(target=revoke)
    rival.start()
    try:
        response = commit(agent, snapshot, ACTION, "released", "lock-order")
        outcome.append(f"commit {response.status_code}")
    except BaseException as exc:
        outcome.append(f"commit {type(exc).__name__}: {exc}")
    rival.join(timeout=60)
    assert sorted(outcome) == ["changed", "commit 201"], outcome
