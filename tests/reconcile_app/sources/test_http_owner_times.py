"""The times an `http` owner vouches for, at the edges of the calendar.

Python reads `9999-12-31T23:59:59-01:00` and `0001-01-01T00:00:00+01:00` (the offsets make
them valid where they were written), but neither has an instant in UTC: the snapshot could
not state them, and the reconcile answered 500. A time with no UTC instant is no time the
owner vouches for: the read is judged as one without it (stale: it fails closed).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from reconcile_app.canonical import rfc3339
from tests.factories import load_yaml
from tests.reconcile_app.sources.test_http import (  # noqa: F401 (fixture)
    http_agent,
    http_files,
    reconcile_through_http,
)

PAST_THE_END = "9999-12-31T23:59:59-01:00"
BEFORE_THE_START = "0001-01-01T00:00:00+01:00"


@pytest.fixture
def owner(db, tmp_path, stub_owner):
    load_yaml(tmp_path, http_files(stub_owner.url))
    return stub_owner


def record(**times: str) -> dict:
    now = rfc3339(timezone.now())
    return {
        "value": "collect",
        "version": 7,
        "valid_from": now,
        "recorded_at": now,
        "observed_at": now,
        **times,
    }


@pytest.mark.parametrize("raw", [PAST_THE_END, BEFORE_THE_START])
def test_an_observed_at_without_a_utc_instant_is_stale(owner, http_agent, raw):
    owner.body = record(observed_at=raw)
    body = reconcile_through_http(http_agent)
    field = body["fields"]["collections_status"]
    assert (field["status"], field["observed_at"]) == ("stale", None)
    assert body["decision"]["result"] == "refuse"


@pytest.mark.parametrize("name", ["valid_from", "recorded_at"])
@pytest.mark.parametrize("raw", [PAST_THE_END, BEFORE_THE_START])
def test_other_times_without_a_utc_instant_are_left_out(owner, http_agent, name, raw):
    owner.body = record(**{name: raw})
    field = reconcile_through_http(http_agent)["fields"]["collections_status"]
    assert field[name] is None
    assert field["status"] == "ok"


def test_an_observed_at_beyond_clock_skew_ahead_is_stale(owner, http_agent):
    """An owner vouching for a moment still to come (its clock wrong by a day, a year, or set
    to 9999) made the read fresh for as long as that: any age minus a future is negative.
    Its time is not trusted beyond the skew evidence is allowed (300 s); within it, it is."""
    ahead = timezone.now() + timedelta(days=1)
    owner.body = record(observed_at=rfc3339(ahead))
    body = reconcile_through_http(http_agent)
    field = body["fields"]["collections_status"]
    assert field["status"] == "stale"
    assert "ahead of this server's clock" in field["detail"]
    assert field["observed_at"] == rfc3339(ahead)  # what the owner said, kept
    assert body["decision"]["result"] == "refuse"
    replayed = http_agent.post(
        f"/api/v1/snapshots/{body['snapshot_id']}/replay", {"mode": "as_recorded"}
    )
    assert replayed.json()["exact"] is True, replayed.content

    owner.body = record(observed_at=rfc3339(timezone.now() + timedelta(seconds=60)))
    skewed = reconcile_through_http(http_agent)["fields"]["collections_status"]
    assert skewed["status"] == "ok"
