"""Replay without refolding: event-sourced reads taken as recorded, no owner asked (what the
release gates use); by default replay folds again the events the reconcile folded, and only
those: not a source read live then (whatever its mode now), not one that delivered nothing."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from reconcile_app.demo.estate_loader import demo_estate_load
from reconcile_app.models import DecisionSnapshot, Principal, Source
from reconcile_app.services import owner_reads, replay
from reconcile_app.services.quarantine import quarantine_apply, quarantine_create
from reconcile_app.services.reconcile import ReconcileRequest, snapshot_issue
from sandbox_app.services import sandbox_fault_add, sandbox_record_write
from tests.reconcile_app.services.old_schemas import issue_as_schema_2


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


def _ledger(snapshot: DecisionSnapshot) -> str:
    return snapshot.content["fields"]["hardship_active"]["source"]


def _ledger_reads(snapshot: DecisionSnapshot) -> list[dict[str, Any]]:
    """The fields folded from the hardship ledger (the letter's own field is read live)."""
    ledger = _ledger(snapshot)
    return [read for read in snapshot.content["fields"].values() if read["source"] == ledger]


def test_a_snapshot_whose_owner_adapter_could_not_be_made_replays_exactly(
    folded_snapshot: DecisionSnapshot,
):
    # The hardship ledger's adapter names a class that is gone: the reconcile failed its
    # fields closed, and replaying that snapshot must neither raise nor differ.
    ledger = folded_snapshot.content["fields"]["hardship_active"]["source"]
    Source.objects.filter(name=ledger).update(adapter="reconcile_app.sources.NoSuchAdapter")
    snapshot = issued_again(folded_snapshot)
    assert {(read["status"], read["detail"]) for read in _ledger_reads(snapshot)} == {
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
    # Said apart from the differences: the replay is incomplete, the decision did not change.
    assert result.unavailable_sources == [ledger]


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
    assert {read["status"] for read in _ledger_reads(snapshot)} == {"quarantined"}

    for mode in ("as_recorded", "corrected"):
        result = replay.snapshot_replay(snapshot=snapshot, mode=mode)

        assert result.exact, (mode, result.differences)
        assert result.unavailable_sources == []  # nothing was folded then: nothing is missing


def test_each_field_says_how_it_was_read(folded_snapshot: DecisionSnapshot):
    snapshot = issued_again(folded_snapshot)

    assert snapshot.content["schema_version"] == "5"
    assert {(read["source"], read["mode"]) for read in snapshot.content["fields"].values()} == {
        ("hardship-ledger", "event_sourced"),
        ("correspondence-service", "live"),
    }


def test_a_snapshot_taken_while_its_event_sourced_owner_was_down_replays_exactly(
    folded_snapshot: DecisionSnapshot,
):
    # The reconcile got no events then: replay must not fold into it the events there are now.
    sandbox_fault_add(source=_ledger(folded_snapshot), kind="unavailable", count=1)
    snapshot = issued_again(folded_snapshot)
    assert {read["status"] for read in _ledger_reads(snapshot)} == {"unavailable"}

    for mode in ("as_recorded", "corrected"):
        result = replay.snapshot_replay(snapshot=snapshot, mode=mode)

        assert result.exact, (mode, result.differences)
        assert result.unavailable_sources == []  # nothing was folded then: nothing is missing


def test_a_source_read_live_then_is_not_folded_now_that_it_is_event_sourced(
    folded_snapshot: DecisionSnapshot,
):
    ledger = _ledger(folded_snapshot)
    subject = folded_snapshot.subject
    # Records the owner answers live reads from, unlike the events folded: replay folding
    # them would change every field.
    for field, read in folded_snapshot.content["fields"].items():
        if read["source"] == ledger:
            sandbox_record_write(source=ledger, subject=subject, field=field, value=read["value"])
    Source.objects.filter(name=ledger).update(mode="live")
    snapshot = issued_again(folded_snapshot)
    fields = snapshot.content["fields"].values()
    assert {(read["mode"], read["status"]) for read in fields} == {("live", "ok")}
    Source.objects.filter(name=ledger).update(mode="event_sourced")

    result = replay.snapshot_replay(snapshot=snapshot, mode="as_recorded")

    assert result.exact, result.differences


def test_a_source_whose_consistency_changed_since_replays_as_it_was_read(
    folded_snapshot: DecisionSnapshot,
):
    snapshot = issued_again(folded_snapshot)
    Source.objects.filter(name=_ledger(snapshot)).update(consistency="eventual")

    result = replay.snapshot_replay(snapshot=snapshot, mode="as_recorded")

    assert result.exact, result.differences


def test_a_source_folded_then_is_folded_again_now_that_it_is_read_live(
    folded_snapshot: DecisionSnapshot, monkeypatch: pytest.MonkeyPatch
):
    snapshot = issued_again(folded_snapshot)
    Source.objects.filter(name=_ledger(snapshot)).update(mode="live")

    assert replay.snapshot_replay(snapshot=snapshot, mode="as_recorded").exact
    monkeypatch.setattr(owner_reads, "events_failing_closed", _owner)
    with pytest.raises(OwnerAsked):
        replay.snapshot_replay(snapshot=snapshot, mode="as_recorded")


def test_a_snapshot_issued_under_schema_2_replays_exactly_and_folds_by_the_sources_mode(
    folded_snapshot: DecisionSnapshot, monkeypatch: pytest.MonkeyPatch
):
    # Before reads said how they were read: replay folds the sources that are event-sourced.
    # As schema 2 wrote it: nor did it record how far along the evidence chain it read.
    issue_as_schema_2(monkeypatch)
    snapshot = issued_again(folded_snapshot)
    monkeypatch.undo()
    assert snapshot.content["schema_version"] == "2"
    assert "ledger_seq" not in snapshot.content
    assert not any("mode" in read for read in snapshot.content["fields"].values())

    assert replay.snapshot_replay(snapshot=snapshot, mode="as_recorded").exact
    monkeypatch.setattr(owner_reads, "events_failing_closed", _owner)
    with pytest.raises(OwnerAsked):
        replay.snapshot_replay(snapshot=snapshot, mode="as_recorded")


def test_an_inexact_replay_names_what_changed_beyond_the_summary(
    folded_snapshot: DecisionSnapshot,
):
    before = folded_snapshot.content
    after = copy.deepcopy(before)
    after["fields"]["hardship_active"]["consistency"] = "eventual"

    assert replay.content_differences(before, before) == []
    assert replay.content_differences(before, after) == [
        {
            "path": "fields.hardship_active.consistency",
            "recorded": before["fields"]["hardship_active"]["consistency"],
            "replayed": "eventual",
        }
    ]
