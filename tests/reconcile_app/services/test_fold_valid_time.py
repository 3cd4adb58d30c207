"""An event-sourced field folds only the events valid by the read (seed 002: "Reconstructing
'what is true now?' uses the corrected valid state"; DESIGN.md: two clocks, valid-time
cut-off). An event recorded now but effective next week does not describe the present."""

from __future__ import annotations

from dataclasses import replace

import pytest

from reconcile_app.services import replay
from reconcile_app.services.reconcile import ReconcileRequest, snapshot_issue
from sandbox_app.services import sandbox_event_append, sandbox_record_write
from tests.conftest import ago, make_agent
from tests.reconcile_app.services.old_schemas import issue_as_schema_2

SUBJECT = "account-scheduled-end"
LEDGER = "hardship-ledger"


@pytest.fixture
def letter_agent(estate):
    return make_agent("letter-agent", ["collections-letter:send_collections_letter"])


def _event(event_id: str, kind: str, valid_from) -> None:
    sandbox_event_append(
        source=LEDGER, event_id=event_id, type=kind, subject=SUBJECT, valid_from=valid_from
    )


def _letter(agent):
    return snapshot_issue(
        principal=agent.principal,
        request=ReconcileRequest(
            subject=SUBJECT,
            purpose="collections",
            decision_class="collections-letter",
            proposed_action="send_collections_letter",
        ),
    )


@pytest.fixture
def hardship_ending_next_week(letter_agent):
    sandbox_record_write(
        source="correspondence-service", subject=SUBJECT, field="letter_status", value="none"
    )
    _event("sched-1", "PaymentMissed", ago(days=1))
    _event("sched-2", "HardshipApproved", ago(hours=1))
    # Recorded now, effective in a week: the arrangement is still active today.
    _event("sched-3", "HardshipRevoked", ago(days=-7))


def test_a_revocation_effective_next_week_does_not_end_the_hardship_now(
    hardship_ending_next_week, letter_agent
):
    snapshot = _letter(letter_agent)

    fields = snapshot.content["fields"]
    assert fields["hardship_active"]["value"] is True
    assert fields["collections_eligible"]["value"] is False
    assert snapshot.content["decision"]["result"] == "deny"
    assert snapshot.content["decision"]["permitted_actions"] == []
    valid_from = fields["hardship_active"]["valid_from"]
    assert valid_from <= snapshot.content["cutoffs"]["valid_time"]


def test_such_a_snapshot_replays_exactly_both_ways(hardship_ending_next_week, letter_agent):
    snapshot = _letter(letter_agent)

    for mode in ("as_recorded", "corrected"):
        result = replay.snapshot_replay(snapshot=snapshot, mode=mode)

        assert result.exact, (mode, result.differences)


def test_a_schema_2_snapshot_that_folded_next_weeks_revocation_replays_as_it_decided(
    hardship_ending_next_week, letter_agent, monkeypatch
):
    """Before content schema 4 the fold took every event recorded by the read: next week's
    revocation ended the hardship at once and the letter was allowed. Replay as recorded
    rebuilds that decision (not one under today's fold); corrected says what changed."""
    issue_as_schema_2(monkeypatch, fold_every_event=True)
    snapshot = _letter(letter_agent)
    monkeypatch.undo()
    content = snapshot.content
    assert content["schema_version"] == "2"
    assert "ledger_seq" not in content
    assert not any("mode" in read for read in content["fields"].values())
    assert content["fields"]["hardship_active"]["value"] is False
    assert content["decision"]["result"] == "allow"

    recorded = replay.snapshot_replay(snapshot=snapshot, mode="as_recorded")
    corrected = replay.snapshot_replay(snapshot=snapshot, mode="corrected")

    assert recorded.exact, recorded.differences
    assert not corrected.exact
    assert {"path": "decision.result", "recorded": "allow", "replayed": "deny"} in (
        corrected.differences
    )


def test_once_its_valid_time_comes_the_revocation_counts(letter_agent):
    sandbox_record_write(
        source="correspondence-service", subject=SUBJECT, field="letter_status", value="none"
    )
    _event("past-1", "PaymentMissed", ago(days=9))
    _event("past-2", "HardshipApproved", ago(days=8))
    _event("past-3", "HardshipRevoked", ago(seconds=1))

    snapshot = _letter(letter_agent)

    assert snapshot.content["fields"]["hardship_active"]["value"] is False
    assert snapshot.content["decision"]["result"] == "allow"


def test_an_owner_whose_clock_runs_ahead_has_its_newest_event_counted(letter_agent, monkeypatch):
    """The owner stamps an approval effective at once by its own clock, two seconds ahead of
    ours: bounded by our clock alone the fold left it out, and the letter was allowed to a
    customer the owner had just put on hardship. The bound is the later of our read time and
    the owner's vouched time, and replay takes it from the stored read."""
    from datetime import timedelta

    from django.utils import timezone

    from sandbox_app.adapter import SandboxAdapter

    sandbox_record_write(
        source="correspondence-service", subject=SUBJECT, field="letter_status", value="none"
    )
    _event("ahead-1", "PaymentMissed", ago(days=1))
    ahead = timezone.now() + timedelta(seconds=2)
    _event("ahead-2", "HardshipApproved", ahead)
    events = SandboxAdapter.events

    def owner_clock_ahead(self, *args, **kwargs):
        answer = events(self, *args, **kwargs)
        return replace(answer, observed_at=ahead + timedelta(milliseconds=5))

    monkeypatch.setattr(SandboxAdapter, "events", owner_clock_ahead)
    snapshot = _letter(letter_agent)

    assert snapshot.content["fields"]["hardship_active"]["value"] is True
    assert snapshot.content["decision"]["result"] == "deny"
    result = replay.snapshot_replay(snapshot=snapshot, mode="as_recorded")
    assert result.exact, result.differences


def test_an_owner_vouching_for_next_week_does_not_bring_next_weeks_events_forward():
    from datetime import timedelta

    from django.utils import timezone

    from reconcile_app.instants import FUTURE_TOLERANCE
    from reconcile_app.services.owner_reads import fold_bound

    now = timezone.now()
    assert fold_bound(now, None) == now
    assert fold_bound(now, now - timedelta(hours=1)) == now  # a replica behind: our now
    assert fold_bound(now, now + timedelta(seconds=2)) == now + timedelta(seconds=2)
    assert fold_bound(now, now + timedelta(days=7)) == now + FUTURE_TOLERANCE


def test_an_event_sourced_owner_vouching_for_tomorrow_is_stale(letter_agent, monkeypatch):
    """As a live read is (owner_reads._vouched_ahead): an events answer whose observed_at is a
    day ahead of our clock made the folded field fresh for a day (9999: for ever), and the
    decision was made on it."""
    from datetime import timedelta

    from django.utils import timezone

    from sandbox_app.adapter import SandboxAdapter

    sandbox_record_write(
        source="correspondence-service", subject=SUBJECT, field="letter_status", value="none"
    )
    _event("tomorrow-1", "PaymentMissed", ago(days=1))
    events = SandboxAdapter.events

    def owner_clock_a_day_ahead(self, *args, **kwargs):
        answer = events(self, *args, **kwargs)
        return replace(answer, observed_at=timezone.now() + timedelta(days=1))

    monkeypatch.setattr(SandboxAdapter, "events", owner_clock_a_day_ahead)
    snapshot = _letter(letter_agent)

    field = snapshot.content["fields"]["hardship_active"]
    assert field["status"] == "stale", field
    assert "ahead of this server's clock" in field["detail"]
    assert snapshot.content["decision"]["result"] == "refuse"
    result = replay.snapshot_replay(snapshot=snapshot, mode="as_recorded")
    assert result.exact, result.differences
