"""A readback judges the postcondition absent only from a view it knows is from after the
commit: a view older than it, or one that vouches for no time, may not have seen it yet."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from reconcile_app.models import Effect
from reconcile_app.services.effects import OwnerUnavailable, effect_readback
from sandbox_app.adapter import SandboxAdapter
from tests.reconcile_app.effects.conftest import commit, reconcile


@pytest.fixture
def accepted(collectible, agent):
    snapshot = reconcile(agent)
    response = commit(agent, snapshot, "release_collections_hold", "released", "k-rb")
    assert response.status_code == 201, response.content
    effect = Effect.objects.get(idempotency_key="k-rb")
    assert effect.status == "accepted"
    return effect


def owner_answering(monkeypatch, **changes) -> None:
    fresh = SandboxAdapter.read

    def behind(self, subject, field):
        return replace(fresh(self, subject, field), value="collect", version=42, **changes)

    monkeypatch.setattr(SandboxAdapter, "read", behind)


@pytest.mark.parametrize("vouched", ["no time", "before the commit"])
def test_a_view_that_may_predate_the_commit_does_not_fail_the_postcondition(
    accepted, monkeypatch, vouched
):
    observed_at = None if vouched == "no time" else accepted.outcome_at - timedelta(seconds=5)
    owner_answering(monkeypatch, observed_at=observed_at)

    with pytest.raises(OwnerUnavailable):
        effect_readback(effect_id=accepted.pk)

    accepted.refresh_from_db()
    assert accepted.status == "accepted"  # was postcondition_failed with no time vouched
    monkeypatch.undo()
    assert effect_readback(effect_id=accepted.pk).status == "verified"
