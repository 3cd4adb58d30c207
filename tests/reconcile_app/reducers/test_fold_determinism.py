"""A fold is a function of the set of events delivered, not of the order they arrive in.

An owner may deliver an event twice (a redelivery) and out of order; the fold must come out
the same, and a snapshot's replay (which asks the owner again) must fold what the reconcile
folded. An event id delivered with two different contents is not a redelivery: which one came
first must not decide the state.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from reconcile_app.reducers import Event, fold
from reconcile_app.reducers.hardship import HARDSHIP_V3

START = datetime(2026, 8, 1, tzinfo=UTC)
EVENTS = st.builds(
    lambda event_id, seq, kind: Event(
        event_id,
        seq,
        kind,
        "acct",
        "",
        None,
        START + timedelta(hours=seq),
        START + timedelta(hours=seq),
    ),
    st.sampled_from(["e1", "e2", "e3", "e4"]),
    st.integers(1, 6),
    st.sampled_from(HARDSHIP_V3.event_types),
)


@settings(max_examples=300, deadline=None)
@given(delivered=st.lists(EVENTS, max_size=8), data=st.data())
def test_the_same_events_in_any_delivery_order_fold_the_same(delivered, data):
    again = data.draw(st.permutations(delivered))
    assert fold(HARDSHIP_V3, again) == fold(HARDSHIP_V3, delivered)


def test_one_event_id_with_two_contents_is_a_conflict_not_first_write_wins():
    moment = START + timedelta(hours=1)
    approved = Event("e1", 1, "HardshipApproved", "acct", "", None, moment, moment)
    revoked = Event("e1", 1, "HardshipRevoked", "acct", "", None, moment, moment)

    for delivered in ([approved, revoked], [revoked, approved]):
        folded = fold(HARDSHIP_V3, delivered)
        assert folded.status == "conflict"
        assert "e1" in folded.detail


def test_an_id_whose_value_is_1_once_and_true_once_is_a_conflict():
    """Python finds 1 == True == 1.0; JSON does not, and a reducer reading the value would
    fold differently by which came first."""
    moment = START + timedelta(hours=1)
    delivered = [
        Event("e1", 1, "HardshipApproved", "acct", "", value, moment, moment) for value in (1, True)
    ]
    for order in (delivered, delivered[::-1]):
        assert fold(HARDSHIP_V3, order).status == "conflict"
    spelled_twice = [
        Event("e1", 1, "HardshipApproved", "acct", "", value, moment, moment) for value in (1, 1.0)
    ]
    assert fold(HARDSHIP_V3, spelled_twice).status == "ok"  # one JSON number, spelled twice
