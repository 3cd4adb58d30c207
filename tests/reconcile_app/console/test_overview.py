"""The overview, the console's home: the live operational figures as charts, each card leading
to the page where the operator acts, in a fixed number of queries whatever the volume.

Traffic is real: a stored drill (refusals, verdicts, contradictions, an escalation, a settled
unknown outcome), unknown outcomes left open, a quarantine.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from drills_app.choices import DrillRunKind, DrillRunStatus
from drills_app.models import DrillRun
from drills_app.runs import drill_run_execute, drill_run_start
from reconcile_app.charts import (
    SHADES,
    TONES,
    counts_figure,
    latency_figure,
    refusals_figure,
    resolution_figure,
    tone,
    unknown_ages_figure,
    verdict_mix_figure,
)
from reconcile_app.selectors.metrics import operational_metrics
from reconcile_app.services.quarantine import quarantine_create
from tests.factories import reconcile_body, seed_account_17
from tests.reconcile_app.api.test_metrics import open_contradiction, open_unknown_outcome
from tests.reconcile_app.console.conftest import signed_in

# session, user, the user's groups (roles), then operational_metrics(): effects by status,
# oldest unknown outcomes, resolution times, hourly decisions, hourly verdicts, refusals,
# reconcile request timings, escalations, contradictions, decision totals, verdict totals,
# quarantines, last drill.
PAGE_QUERIES = 3 + 13
CHARTS = (
    "unknown",
    "resolution",
    "escalations",
    "contradictions",
    "verdicts",
    "latency",
    "refusals",
    "quarantines",
)


def figures(html: str) -> dict[str, dict[str, Any]]:
    blocks = re.findall(
        r'<script type="application/json" id="chart-([^"]+)-data">(.*?)</script>', html
    )
    return {name: json.loads(body) for name, body in blocks}


def traces(figure: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {trace["name"]: trace for trace in figure["data"]}


def empty_message(figure: dict[str, Any]) -> str | None:
    annotations = figure["layout"].get("annotations") or []
    return annotations[0]["text"] if not figure["data"] and annotations else None


def reconcile_through_the_api(agent: Any) -> dict[str, Any]:
    """A real `POST /api/v1/reconcile`: the only kind of decision the request time covers."""
    seed_account_17(timezone.now())
    response = agent.post("/api/v1/reconcile", reconcile_body())
    assert response.status_code == 201, response.content
    return response.json()


@pytest.fixture
def traffic(db: Any, operator: Any, estate: Any, agent: Any) -> DrillRun:
    reconcile_through_the_api(agent)
    run = drill_run_execute(
        run_id=drill_run_start(kind=DrillRunKind.DRILL, parameters={"repeat": 1}).pk
    )
    assert run.status == DrillRunStatus.COMPLETE, run.error
    open_contradiction("overview-contradiction")  # the drill closes its own
    open_unknown_outcome("overview-unknown", minutes_ago=40)
    quarantine_create(
        scope="memory_class", target="case-notes", reason="poisoned", actor=operator.user
    )
    return run


def test_home_is_the_overview_and_first_in_the_navigation(operator_browser):
    html = operator_browser.get("/").content.decode()
    nav = re.search(r'<nav class="nav".*?</nav>', html, re.S).group(0)
    labels = re.findall(r">([^<]+)</a>", nav)
    assert labels[0] == "Overview" and "Drills" in labels
    assert re.search(r'<a [^>]*href="/" class="active" aria-current="page">Overview</a>', nav)
    assert re.search(r'<a [^>]*href="/drills/">Drills</a>', nav)


def test_every_figure_is_charted_with_its_numbers(operator_browser, traffic):
    response = operator_browser.get("/")
    html = response.content.decode()
    drawn = figures(html)
    assert set(drawn) == set(CHARTS)
    metrics = operational_metrics()

    unknown = traces(drawn["unknown"])["Waiting"]
    assert unknown["y"] == ["overview-unknown-key"]
    assert 39 <= unknown["x"][0] <= 41  # minutes
    assert re.search(r'id="stat-unknown">1<', html)

    resolution = traces(drawn["resolution"])["Resolution time"]
    assert resolution["x"] == ["p50", "p95"]  # the drill settled its lost answer

    refusals = traces(drawn["refusals"])
    by_code = {
        (result, code): count
        for result, trace in refusals.items()
        for code, count in zip(trace["y"], trace["x"], strict=True)
        if count
    }
    assert by_code == {(row["result"], row["code"]): row["count"] for row in metrics["refusals"]}

    verdicts = traces(drawn["verdicts"])
    judged = metrics["totals"]["verdicts"]
    assert {name.replace(" ", "_") for name in verdicts} == set(judged)
    assert {name.replace(" ", "_"): sum(t["y"]) for name, t in verdicts.items()} == judged
    assert verdicts["confirmed"]["marker"]["color"] == TONES["green"]

    assert set(traces(drawn["latency"])) == {"p50", "p95"}
    escalations = traces(drawn["escalations"])["Open"]
    assert escalations["y"] == [
        code.replace("_", " ") for code in metrics["escalations"]["by_code"]
    ]
    quarantines = traces(drawn["quarantines"])["Open"]
    assert (quarantines["y"], quarantines["x"]) == (["memory class"], [1])
    assert re.search(r'id="stat-quarantines">1<', html)
    assert f'href="/drills/{traffic.pk}/"' in html, "the last drill, linked"


def test_each_card_leads_to_where_the_operator_acts(operator_browser, traffic):
    html = operator_browser.get("/").content.decode()
    links = dict(
        re.findall(
            r'<section class="card metric-card[^"]*" id="card-([a-z]+)".*?<a href="([^"]+)"',
            html,
            re.S,
        )
    )
    since = re.search(r"issued_after=([^&\"]+)", html).group(1)
    assert links == {
        "unknown": "/effects/",
        "resolution": f"/effects/?status=all&amp;settled_after={since}",
        "escalations": "/escalations/",
        "contradictions": "/contradictions/",
        "verdicts": f"/snapshots/?issued_after={since}",
        "latency": f"/snapshots/?issued_after={since}",
        "refusals": f"/snapshots/?result=deny&amp;issued_after={since}",
        "quarantines": "/quarantine/?status=applying&amp;status=applied",
        "drill": "/drills/",
    }


def test_an_empty_deployment_says_so_on_every_chart(operator_browser):
    response = operator_browser.get("/")
    assert response.status_code == 200
    drawn = figures(response.content.decode())
    assert {name: empty_message(figure) for name, figure in drawn.items()} == {
        "unknown": "No unknown outcome is open",
        "resolution": "No unknown outcome was settled in the window",
        "escalations": "No escalation is waiting",
        "contradictions": "No contradiction is open",
        "verdicts": "No claims were judged in the window",
        "latency": "No reconcile request was timed in the window",
        "refusals": "Every decision in the window allowed",
        "quarantines": "Nothing is quarantined",
    }
    assert "No drill has run yet" in response.content.decode()


@pytest.mark.parametrize("persona", ["reviewer", "auditor"])
def test_every_person_in_a_role_sees_the_overview(request, persona):
    assert signed_in(request.getfixturevalue(persona)).get("/").status_code == 200


def test_agents_are_refused_and_visitors_sent_to_log_in(agent):
    assert signed_in(agent).get("/").status_code == 403
    response = Client().get("/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


@pytest.mark.parametrize("open_unknown", [1, 4])
def test_query_count_does_not_grow_with_traffic(
    operator_browser, traffic, django_assert_num_queries, open_unknown
):
    for index in range(open_unknown):
        open_unknown_outcome(f"overview-more-{index}", minutes_ago=5 + index)
    with django_assert_num_queries(PAGE_QUERIES):
        assert operator_browser.get("/").status_code == 200


# --- The chart functions, on plain data -----------------------------------------------------


def test_verdicts_sharing_a_badge_colour_get_shades_of_it():
    assert tone("superseded") == TONES["amber"] and tone("stale_state") == SHADES["stale_state"]
    assert tone("deny") == TONES["red"] and tone("refuse") == SHADES["refuse"]
    assert tone("never-heard-of-it") == TONES["grey"]


def test_verdict_mix_stacks_each_verdict_per_hour():
    hourly = [
        {"hour": "2026-05-01T10:00:00Z", "verdicts": {"confirmed": 3}, "latency_ms": None},
        {
            "hour": "2026-05-01T11:00:00Z",
            "verdicts": {"confirmed": 1, "stale_state": 2},
            "latency_ms": {"p50": 4.0, "p95": 9.0},
        },
    ]
    stacked = {trace.name: trace for trace in verdict_mix_figure(hourly).data}
    assert stacked["confirmed"].y == (3, 1) and stacked["stale state"].y == (0, 2)
    assert verdict_mix_figure(hourly).layout.barmode == "stack"
    latency = {trace.name: trace for trace in latency_figure(hourly).data}
    assert latency["p95"].y == (None, 9.0), "an hour without decisions is a gap, not a zero"
    assert latency_figure(hourly).layout.xaxis.range == (
        "2026-05-01 09:30:00",
        "2026-05-01 11:30:00",
    )


def test_refusals_stack_by_result_most_frequent_code_on_top():
    figure = refusals_figure(
        [
            {"result": "deny", "code": "hardship_hold", "count": 5},
            {"result": "refuse", "code": "stale_state", "count": 2},
            {"result": "escalate", "code": "stale_state", "count": 1},
        ]
    )
    stacked = {trace.name: trace for trace in figure.data}
    assert stacked["deny"].y == ("stale_state", "hardship_hold")
    assert stacked["deny"].x == (0, 5) and stacked["refuse"].x == (2, 0)


def test_durations_pick_a_readable_unit():
    ages = unknown_ages_figure(
        {
            "oldest": [
                {
                    "idempotency_key": "k",
                    "subject": "s",
                    "age_seconds": 3 * 86400,
                    "resolution_attempts": 2,
                }
            ]
        }
    )
    assert ages.data[0].x == (3.0,) and ages.layout.xaxis.title.text == "waiting (days)"
    quick = resolution_figure({"resolved": 3, "p50": 0.004, "p95": 0.012})
    assert quick.data[0].y == (4.0, 12.0) and quick.layout.yaxis.title.text == "ms"


def test_counts_chart_lists_only_what_is_open_largest_on_top():
    figure = counts_figure({"a_code": 1, "b_code": 3, "closed": 0}, colour="amber", empty="none")
    assert figure.data[0].y == ("a code", "b code") and figure.data[0].x == (1, 3)
    assert not counts_figure({}, colour="amber", empty="none").data


def test_the_overview_reads_its_figures_once_per_refresh_period(
    operator_browser, traffic, django_assert_num_queries
):
    """Every open tab re-reads the overview every few seconds: within one period they share
    one computation per window (the shared cache), and a week costs no more than a day."""
    from django.core.cache import cache

    with django_assert_num_queries(PAGE_QUERIES):
        operator_browser.get("/?hours=168")
    with django_assert_num_queries(3):  # session, user, roles: the figures come from cache
        body = operator_browser.get("/?hours=168", HTTP_HX_REQUEST="true").content.decode()
    assert 'id="stat-unknown">1<' in body
    with django_assert_num_queries(PAGE_QUERIES):  # another window, its own figures
        operator_browser.get("/?hours=1")
    open_unknown_outcome("overview-later", minutes_ago=1)
    cache.clear()  # the period is over
    body = operator_browser.get("/?hours=168").content.decode()
    assert 'id="stat-unknown">2<' in body
