"""Live queues and the live overview: a watermark on the page, a poll that reports what is new
against it, and a table that never changes until the reader asks (reconcile_app/console/live.py,
static/reconcile/live.js; the browser journey is tests/browser/test_console_live.py)."""

from __future__ import annotations

import html as html_lib
import re
from typing import Any

import pytest

from reconcile_app.models import Contradiction, Effect, Escalation
from tests.reconcile_app.console.conftest import ambiguous_fact, commit_effect

# session, user, the user's groups, then one aggregate over the page's own filters.
POLL_QUERIES = 4


def live_bar(body: str) -> dict[str, str]:
    bar = re.search(r'<div class="live-bar" data-live (.*?)>', body, re.S)
    assert bar, "the page has a live bar"
    return {
        name: html_lib.unescape(value)
        for name, value in re.findall(r'data-live-([a-z]+)="([^"]*)"', bar.group(1))
    }


def test_a_queue_carries_the_watermark_of_what_it_shows(operator_browser, make_snapshot):
    for index in range(3):
        make_snapshot(subject=f"account-{index}", claimed="collect")
    newest = Contradiction.objects.order_by("-pk").first()
    bar = live_bar(operator_browser.get("/contradictions/?subject=ACCOUNT").content.decode())
    assert bar["mode"] == "marker" and bar["seconds"] == "10"
    assert (bar["count"], bar["newest"]) == ("3", str(newest.pk))
    assert bar["region"] == "#contradiction-region"
    assert bar["reload"] == "/contradictions/?subject=ACCOUNT"
    digest = sum(Contradiction.objects.values_list("pk", flat=True))
    assert bar["digest"] == str(digest)
    assert bar["poll"] == f"/contradictions/?subject=ACCOUNT&live={newest.pk}.3.{digest}"


def test_the_poll_counts_rows_newer_than_the_watermark_within_the_filters(
    operator_browser, make_snapshot
):
    make_snapshot(subject="account-1", claimed="collect")
    bar = live_bar(operator_browser.get("/contradictions/?subject=account-1").content.decode())
    assert operator_browser.get(bar["poll"]).json() == {
        "count": 1,
        "newest": int(bar["newest"]),
        "new": 0,
        "entered": 0,
        "gone": 0,
        "changed": False,
    }
    make_snapshot(subject="account-1-b", claimed="collect")  # matches: subject contains it
    make_snapshot(subject="account-2", claimed="collect")  # outside the filter
    answer = operator_browser.get(bar["poll"])
    assert answer["Content-Type"] == "application/json"
    assert "no-cache" in answer["Cache-Control"]
    figures = answer.json()
    assert (figures["count"], figures["new"]) == (2, 1)
    assert figures["newest"] > int(bar["newest"])


def test_a_row_leaving_the_queue_is_reported_as_gone_not_new(operator_browser, make_snapshot):
    make_snapshot(subject="account-1", claimed="collect")
    make_snapshot(subject="account-2", claimed="collect")
    bar = live_bar(operator_browser.get("/contradictions/").content.decode())
    row = Contradiction.objects.order_by("pk").first()
    operator_browser.post(f"/contradictions/{row.pk}/resolve/", {"note": "settled"})
    # The open tab now holds one row fewer and none newer: live.js shows "1 gone".
    figures = operator_browser.get(bar["poll"]).json()
    assert (figures["count"], figures["new"], figures["entered"], figures["gone"]) == (1, 0, 0, 1)
    assert figures["changed"] is True


def test_an_older_row_entering_the_queue_is_reported(operator_browser, estate, agent):
    """After an outage: an effect sent before the page was read becomes unknown later. It is
    older than the watermark's newest row, so only the set's count and digest can tell."""
    sent = commit_effect(agent, "live-old", fault=None)
    commit_effect(agent, "live-unknown", fault="timeout_after_commit")
    bar = live_bar(operator_browser.get("/effects/").content.decode())
    assert bar["count"] == "1" and int(bar["newest"]) > sent.pk
    Effect.objects.filter(pk=sent.pk).update(status="unknown")
    figures = operator_browser.get(bar["poll"]).json()
    assert (figures["count"], figures["new"], figures["entered"], figures["gone"]) == (2, 0, 1, 0)
    assert figures["changed"] is True


def test_a_swap_among_older_rows_is_a_change_though_the_count_holds(
    operator_browser, estate, agent
):
    settled = commit_effect(agent, "live-a", fault=None)
    lost = commit_effect(agent, "live-b", fault="timeout_after_commit")
    commit_effect(agent, "live-c", fault="timeout_after_commit")
    bar = live_bar(operator_browser.get("/effects/").content.decode())
    assert bar["count"] == "2"
    Effect.objects.filter(pk=settled.pk).update(status="unknown")
    Effect.objects.filter(pk=lost.pk).update(status="not_executed")
    figures = operator_browser.get(bar["poll"]).json()
    assert (figures["count"], figures["new"], figures["entered"], figures["gone"]) == (2, 0, 0, 0)
    assert figures["changed"] is True


def test_a_bad_watermark_counts_everything_as_new(operator_browser, make_snapshot):
    make_snapshot(subject="account-1", claimed="collect")
    assert operator_browser.get("/contradictions/?live=nonsense").json()["new"] == 1


def test_the_unknown_outcomes_queue_is_live(
    operator_browser, estate, agent, django_assert_num_queries
):
    commit_effect(agent, "live-1", fault="timeout_after_commit")
    bar = live_bar(operator_browser.get("/effects/").content.decode())
    assert bar["region"] == "#effect-region" and bar["count"] == "1"
    commit_effect(agent, "live-2", fault="timeout_after_commit")
    with django_assert_num_queries(POLL_QUERIES):
        figures = operator_browser.get(bar["poll"]).json()
    assert figures == {
        "count": 2,
        "newest": Effect.objects.order_by("-pk").first().pk,
        "new": 1,
        "entered": 0,
        "gone": 0,
        "changed": False,
    }


def test_the_escalations_queue_is_live(
    reviewer_browser, registry, agent, django_assert_num_queries
):
    ambiguous_fact(agent, agent, "baseline.eval-1")
    bar = live_bar(reviewer_browser.get("/escalations/").content.decode())
    assert bar["region"] == "#escalation-region"
    ambiguous_fact(agent, agent, "baseline.eval-2")
    with django_assert_num_queries(POLL_QUERIES):
        figures = reviewer_browser.get(bar["poll"]).json()
    assert figures["new"] == 1 and figures["count"] == Escalation.objects.count() == 2


@pytest.mark.parametrize("rows", [1, 6])
def test_the_poll_costs_the_same_whatever_the_rows(
    operator_browser, make_snapshot, django_assert_num_queries, rows
):
    for index in range(rows):
        make_snapshot(subject=f"account-{index}", claimed="collect")
    with django_assert_num_queries(POLL_QUERIES):
        assert operator_browser.get("/contradictions/?status=all&live=0").json()["new"] == rows


def test_the_overview_re_reads_itself_in_place(operator_browser: Any):
    page = operator_browser.get("/?hours=1").content.decode()
    bar = live_bar(page)
    assert bar["mode"] == "swap" and bar["region"] == "#overview-region"
    assert bar["reload"] == "/?hours=1"
    partial = operator_browser.get(bar["reload"], HTTP_HX_REQUEST="true")
    body = partial.content.decode()
    assert body.lstrip().startswith("{") is False
    assert '<div id="overview-region">' in body and "<html" not in body
    assert "HX-Request" in partial["Vary"]


def test_the_live_script_is_served_and_loaded_on_every_page(operator_browser):
    page = operator_browser.get("/effects/").content.decode()
    assert re.search(r'<script src="/static/reconcile/live\.js[^"]*" defer>', page)
    assert re.search(r'<link rel="stylesheet" href="/static/reconcile/live\.css[^"]*">', page)
