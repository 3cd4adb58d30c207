"""Pure presentation helpers: badge colours, durations, values, freshness arithmetic."""

from __future__ import annotations

import pytest
from django.utils.dateparse import parse_datetime

from reconcile_app.choices import BADGE_COLOURS
from reconcile_app.selectors.snapshot_detail import field_rows, verdict_counts
from reconcile_app.templatetags.reconcile_tags import (
    badge,
    badge_colour,
    duration,
    event_detail,
    jsonvalue,
)


@pytest.mark.parametrize("value", sorted(BADGE_COLOURS))
def test_every_badge_value_has_its_declared_colour(value):
    assert f'class="badge badge-{BADGE_COLOURS[value]}"' in badge(value)


def test_unknown_value_gets_the_neutral_badge_and_empty_gets_a_dash():
    assert 'badge-grey">something new</span>' in badge("something_new")
    assert "badge" not in badge(None)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0.0s"),
        (4.25, "4.2s"),
        (45, "45s"),
        (300, "5m 00s"),
        (3725, "1h 02m"),
        (-3, "-3.0s"),
        (3 * 86400, "3d 00h"),
        (None, "—"),
    ],
)
def test_duration(seconds, text):
    assert duration(seconds) == text


def test_values_show_strings_bare_and_everything_else_as_json():
    assert jsonvalue("hold") == "hold"
    assert jsonvalue(None) == "null"
    assert jsonvalue({"b": 1, "a": [True]}) == '{"a": [true],"b": 1}'


def test_freshness_is_age_at_the_valid_time_cutoff_against_max_age():
    content = {
        "fields": {
            "fresh": {"observed_at": "2026-08-30T09:58:00Z", "max_age_seconds": 300},
            "stale": {"observed_at": "2026-08-30T09:50:00Z", "max_age_seconds": 300},
            "missing": {"observed_at": None, "max_age_seconds": 300},
        }
    }
    rows = {row.name: row for row in field_rows(content, parse_datetime("2026-08-30T10:00:00Z"))}
    assert rows["fresh"].age_seconds == 120 and rows["fresh"].fresh is True
    assert rows["stale"].age_seconds == 600 and rows["stale"].fresh is False
    assert rows["missing"].age_seconds is None and rows["missing"].fresh is None


def test_verdict_counts_put_disagreement_first_and_keep_unknown_verdicts():
    verdicts = ("confirmed", "contradicted", "confirmed", "new")
    content = {"claims": [{"verdict": verdict} for verdict in verdicts]}
    assert verdict_counts(content) == [("contradicted", 1), ("confirmed", 2), ("new", 1)]


@pytest.mark.parametrize(
    "value", ["approved", "rejected", "verified", "unknown", "authority_ambiguous", "applied"]
)
def test_every_status_the_console_shows_has_its_own_colour(value):
    assert value in BADGE_COLOURS
    assert f'class="badge badge-{BADGE_COLOURS[value]}"' in badge(value)


def test_effect_and_escalation_outcomes_read_apart_at_a_glance():
    # Proven, unproven, failed and refused never share a colour.
    colours = {
        value: badge_colour(value)
        for value in ("verified", "unknown", "postcondition_failed", "not_executed")
    }
    assert len(set(colours.values())) == 4
    assert badge_colour("approved") != badge_colour("rejected")


def test_event_detail_shows_pairs_and_a_receipt_by_its_id():
    html = event_detail(
        {"expected_version": 42, "receipt": {"receipt_id": "rcpt-1", "resulting_version": 43}}
    )
    assert '<span class="muted">expected version</span> <span class="mono">42</span>' in html
    assert ">rcpt-1</span>" in html and "resulting_version" in html  # the rest in the tooltip
    assert "badge" not in event_detail({}) and "—" in event_detail(None)
