"""Effects in every status the console shows, made through the protocol (shared fixtures)."""

from __future__ import annotations

import pytest

from reconcile_app.models import Effect
from tests.reconcile_app.console.conftest import commit_effect, read_back


@pytest.fixture
def mixed_effects(estate, agent) -> dict[str, Effect]:
    """One effect in each status the tabs show, made through the protocol."""
    effects = {}
    effects["unknown"] = commit_effect(agent, "u-1", fault="timeout_after_commit")
    effects["rejected"] = commit_effect(agent, "r-1", changed_meanwhile=True)
    effects["verified"] = read_back(commit_effect(agent, "v-1"))
    effects["postcondition_failed"] = read_back(
        commit_effect(agent, "p-1", fault="drop_postcondition")
    )
    effects["accepted"] = commit_effect(agent, "a-1")
    assert {key: effect.status for key, effect in effects.items()} == {key: key for key in effects}
    return effects
