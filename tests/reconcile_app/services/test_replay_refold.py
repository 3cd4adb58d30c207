"""Replay without refolding: event-sourced reads taken as recorded, no owner asked (what the
release gates use); by default replay still folds the owner's event log again."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_app.demo.estate_loader import demo_estate_load
from reconcile_app.models import DecisionSnapshot, Principal, Source
from reconcile_app.services import owner_reads, replay
from reconcile_app.services.quarantine import quarantine_apply, quarantine_create
from reconcile_app.services.reconcile import ReconcileRequest, snapshot_issue


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
    monkeypatch.setattr(replay, "folded_reads", _owner)

    result = replay.snapshot_replay(snapshot=folded_snapshot, mode="as_recorded", refold=False)

    assert result.exact, result.differences


def test_replay_folds_the_owners_events_again_by_default(
    folded_snapshot: DecisionSnapshot, monkeypatch: pytest.MonkeyPatch
):
    assert replay.snapshot_replay(snapshot=folded_snapshot, mode="as_recorded").exact
    monkeypatch.setattr(owner_reads, "events_failing_closed", _owner)

    with pytest.raises(OwnerAsked):
        replay.snapshot_replay(snapshot=folded_snapshot, mode="as_recorded")


def issued_again(snapshot: DecisionSnapshot) -> DecisionSnapshot:
    """The same request as `snapshot`'s, decided now."""
    binding = snapshot.content["binding"]
    return snapshot_issue(
        principal=Principal.objects.get(name=binding["principal"]),
        request=ReconcileRequest(
            subject=binding["subject"],
            purpose=binding["purpose"],
            decision_class=binding["decision_class"],
            proposed_action=binding["proposed_action"],
        ),
    )


def test_a_snapshot_whose_owner_adapter_could_not_be_made_replays_exactly(
    folded_snapshot: DecisionSnapshot,
):
    # The hardship ledger's adapter names a class that is gone: the reconcile failed its
    # fields closed, and replaying that snapshot must neither raise nor differ.
    ledger = folded_snapshot.content["fields"]["hardship_active"]["source"]
    Source.objects.filter(name=ledger).update(adapter="reconcile_app.sources.NoSuchAdapter")
    snapshot = issued_again(folded_snapshot)
    fields = snapshot.content["fields"]
    assert {(read["status"], read["detail"]) for read in fields.values()} == {
        ("unavailable", "adapter error: ImportError")
    }

    result = replay.snapshot_replay(snapshot=snapshot, mode="as_recorded")

    assert result.exact, result.differences


def test_replay_of_an_owner_whose_adapter_is_gone_now_reports_it(
    folded_snapshot: DecisionSnapshot,
):
    ledger = folded_snapshot.content["fields"]["hardship_active"]["source"]
    Source.objects.filter(name=ledger).update(adapter="reconcile_app.sources.NoSuchAdapter")

    result = replay.snapshot_replay(snapshot=folded_snapshot, mode="as_recorded")

    assert not result.exact
    changed = {d["path"]: d["replayed"] for d in result.differences}
    assert changed["fields.hardship_active.status"] == "unavailable"
    assert changed["decision.result"] == "refuse"


def test_a_snapshot_taken_while_its_event_sourced_owner_was_quarantined_replays_exactly(
    folded_snapshot: DecisionSnapshot, operator: Any
):
    # The owner was not asked then; replay must not fold its events into the fields now.
    ledger = folded_snapshot.content["fields"]["hardship_active"]["source"]
    quarantine = quarantine_create(
        scope="source", target=ledger, reason="poisoned events", actor=operator.user
    )
    quarantine_apply(quarantine_id=quarantine.quarantine_id)
    snapshot = issued_again(folded_snapshot)
    assert {read["status"] for read in snapshot.content["fields"].values()} == {"quarantined"}

    for mode in ("as_recorded", "corrected"):
        result = replay.snapshot_replay(snapshot=snapshot, mode=mode)

        assert result.exact, (mode, result.differences)
