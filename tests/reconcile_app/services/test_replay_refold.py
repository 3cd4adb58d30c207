"""Replay without refolding: event-sourced reads taken as recorded, no owner asked (what the
release gates use); by default replay still folds the owner's event log again."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_app.demo.estate_loader import demo_estate_load
from reconcile_app.models import DecisionSnapshot
from reconcile_app.services import replay


class OwnerAsked(Exception):
    pass


def _owner(*args: Any, **kwargs: Any) -> Any:
    raise OwnerAsked


@pytest.fixture
def folded_snapshot(db: None) -> DecisionSnapshot:
    demo_estate_load()
    return DecisionSnapshot.objects.filter(decision_class="collections-letter").first()  # type: ignore[return-value]


def test_replay_without_refold_asks_no_owner_and_is_exact(
    folded_snapshot: DecisionSnapshot, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(replay, "adapter_for", _owner)

    result = replay.snapshot_replay(snapshot=folded_snapshot, mode="as_recorded", refold=False)

    assert result.exact, result.differences


def test_replay_folds_the_owners_events_again_by_default(
    folded_snapshot: DecisionSnapshot, monkeypatch: pytest.MonkeyPatch
):
    assert replay.snapshot_replay(snapshot=folded_snapshot, mode="as_recorded").exact
    monkeypatch.setattr(replay, "adapter_for", _owner)

    with pytest.raises(OwnerAsked):
        replay.snapshot_replay(snapshot=folded_snapshot, mode="as_recorded")
