"""Live metrics: `GET /api/v1/metrics` (JSON) and `/metrics` (Prometheus), from real traffic."""

from __future__ import annotations

import io
import re
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from drills_app.scenarios import SCENARIOS, DrillParameters, drill_suite_run
from drills_app.world import (
    DECISION_CLASS,
    FIELD,
    PURPOSE,
    drill_estate_ensure,
    fault_inject,
    world_prepare,
)
from reconcile_app.choices import EffectStatus
from reconcile_app.models import DecisionReceipt, Effect
from reconcile_app.services.effects import effect_commit
from reconcile_app.services.quarantine import quarantine_create
from reconcile_app.services.reconcile import ReconcileRequest, snapshot_issue
from tests.factories import reconcile_body, seed_account_17

# Authentication (key + principal) and roles, then the figures themselves.
JSON_QUERIES = 2 + 13
SAMPLE = re.compile(
    r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? '
    r"(NaN|[-+]?Inf|[-+]?[0-9.]+(e[-+]?[0-9]+)?)$"
)


def open_unknown_outcome(subject: str, minutes_ago: int) -> Effect:
    """A commit whose answer was lost; no worker runs in tests, so it stays unknown."""
    principal = drill_estate_ensure()
    world = world_prepare(scenario=SCENARIOS[0], subject=subject, now=timezone.now())
    snapshot = snapshot_issue(
        principal=principal,
        request=ReconcileRequest(
            subject=subject, purpose=PURPOSE, decision_class=DECISION_CLASS, claims=world.claims
        ),
    )
    fault_inject("timeout_after_commit")
    effect = effect_commit(
        principal=principal,
        idempotency_key=f"{subject}-key",
        if_match=f'"{snapshot.content["fields"][FIELD]["version"]}"',
        snapshot_id=snapshot.snapshot_id,
        action="retain_manual_review",
        resulting_value="manual_review",
    ).effect
    assert effect.status == EffectStatus.UNKNOWN
    Effect.objects.filter(pk=effect.pk).update(
        outcome_at=timezone.now() - timedelta(minutes=minutes_ago)
    )
    return effect


def open_contradiction(subject: str) -> None:
    """Two sources disagreeing about valid time: an escalation and a contradiction, open
    (a drill closes its own when it ends, drills_app/cleanup.py)."""
    principal = drill_estate_ensure()
    scenario = next(item for item in SCENARIOS if item.name == "sources_disagree_valid_time")
    world = world_prepare(scenario=scenario, subject=subject, now=timezone.now())
    snapshot = snapshot_issue(
        principal=principal,
        request=ReconcileRequest(
            subject=subject,
            purpose=PURPOSE,
            decision_class=DECISION_CLASS,
            proposed_action=scenario.action,
            claims=world.claims,
        ),
    )
    assert snapshot.result == "escalate"


@pytest.fixture
def traffic(db, operator, estate, agent) -> None:
    """A stored drill (refusals, a resolved unknown outcome; the escalation and
    contradictions it opened, closed as it ended), an escalation and a contradiction still
    open, an unknown outcome still open, a memory-class quarantine, and one reconcile request."""
    seed_account_17(timezone.now())
    assert agent.post("/api/v1/reconcile", reconcile_body()).status_code == 201
    call_command("drill", "--repeat", "1", stdout=io.StringIO())
    open_contradiction("metrics-contradiction")
    open_unknown_outcome("metrics-unknown", minutes_ago=10)
    quarantine_create(
        scope="memory_class", target="case-notes", reason="poisoned", actor=operator.user
    )


def test_anonymous_is_401_and_agents_are_403(db, agent):
    assert APIClient().get("/api/v1/metrics").status_code == 401
    response = agent.get("/api/v1/metrics")
    assert response.status_code == 403
    assert response["Content-Type"] == "application/problem+json"


def test_people_in_every_role_read_the_figures(traffic, operator, reviewer, auditor):
    for person in (operator, reviewer, auditor):
        assert person.get("/api/v1/metrics").status_code == 200


def test_figures_come_from_the_real_traffic(traffic, auditor):
    body = auditor.get("/api/v1/metrics").json()
    unknown = body["unknown_outcomes"]
    assert unknown["open"] == 1
    assert unknown["oldest"][0]["idempotency_key"] == "metrics-unknown-key"
    assert 600 <= unknown["oldest_age_seconds"] < 700
    # The drill's two: its timeout (by the ledger) and its lost dedupe record (by a person).
    assert body["resolution_seconds"]["resolved"] == 2
    assert body["resolution_seconds"]["p50"] >= 0
    refusals = {(row["result"], row["code"]): row["count"] for row in body["refusals"]}
    assert refusals[("deny", "hardship_hold")] >= 1
    assert refusals[("refuse", "stale_state")] == 1
    assert refusals[("refuse", "evidence_missing")] == 1
    assert refusals[("escalate", "contradiction")] == 2  # the drill's, and the open one
    assert body["escalations"]["open"] == 1
    assert body["escalations"]["by_code"] == {"contradiction": 1}
    assert body["contradictions"]["by_kind"]["evidence_vs_state"] == 1
    assert body["quarantines"] == {"active": 1, "by_scope": {"memory_class": 1}}
    assert body["last_drill"]["passed"] is True
    assert set(body["last_drill"]["protocol"].values()) == {0}


def test_verdict_mix_decisions_and_latency_per_hour(traffic, auditor):
    body = auditor.get("/api/v1/metrics").json()
    hourly = body["hourly"]
    assert len(hourly) in (24, 25)  # every hour of the window, empty ones included
    total = sum(bucket["reconciles"] for bucket in hourly)
    assert total == body["reconcile"]["count"] == sum(body["totals"]["decisions"].values())
    verdicts: dict[str, int] = {}
    for bucket in hourly:
        for verdict, count in bucket["verdicts"].items():
            verdicts[verdict] = verdicts.get(verdict, 0) + count
    assert verdicts == body["totals"]["verdicts"]
    assert {"confirmed", "superseded", "stale_state", "unverified"} <= set(verdicts)
    # Only the one request through the API is timed: the drill decided in-process.
    assert body["reconcile"]["latency_measured"] == 1 < total
    assert body["reconcile"]["latency_ms"]["p95"] >= body["reconcile"]["latency_ms"]["p50"] >= 0


@pytest.mark.parametrize("hours", ["0", "169", "day"])
def test_window_out_of_range_is_a_400_problem(db, auditor, hours):
    response = auditor.get("/api/v1/metrics", hours=hours)
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_hours"


def test_window_sets_the_hourly_series(traffic, auditor):
    body = auditor.get("/api/v1/metrics", hours=2).json()
    assert body["window_hours"] == 2
    assert len(body["hourly"]) in (2, 3)


def test_query_count_does_not_grow_with_traffic(traffic, auditor, django_assert_num_queries):
    with django_assert_num_queries(JSON_QUERIES):
        assert auditor.get("/api/v1/metrics").status_code == 200
    drill_suite_run(DrillParameters(repeat=2))
    open_unknown_outcome("metrics-unknown-2", minutes_ago=3)
    with django_assert_num_queries(JSON_QUERIES):
        body = auditor.get("/api/v1/metrics").json()
    assert body["unknown_outcomes"]["open"] == 2


# --- /metrics -------------------------------------------------------------------------------


def scrape(client: Any, **headers: str) -> Any:
    return client.get(
        "/metrics",
        HTTP_ACCEPT="application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5",
        **headers,
    )


def test_prometheus_exposition_for_an_operator(traffic, operator):
    response = scrape(operator.client)
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    text = response.content.decode()
    assert "# TYPE reconcile_decisions_total counter" in text
    assert 'reconcile_decisions_total{result="escalate"} 2' in text  # the drill's, the open one
    assert "reconcile_unknown_outcomes_open 1" in text
    assert 'reconcile_quarantines_active{scope="memory_class"} 1' in text
    assert 'reconcile_quarantines_active{scope="source"} 0' in text
    assert 'reconcile_escalations_open_by_code{code="contradiction"} 1' in text
    assert "reconcile_drill_last_passed 1" in text
    assert "# TYPE reconcile_latency_seconds histogram" in text


def sample_value(text: str, sample: str) -> float:
    (line,) = [line for line in text.splitlines() if line.startswith(sample + " ")]
    return float(line.rsplit(" ", 1)[1])


def test_window_latencies_are_histograms_of_the_window(traffic, auditor):
    """p50/p95 gauges became bucket counts of the same 24 hours' samples."""
    figures = auditor.get("/api/v1/metrics").json()
    text = scrape(auditor.client).content.decode()
    measured = figures["reconcile"]["latency_measured"]
    assert measured > 0
    assert sample_value(text, 'reconcile_latency_seconds_bucket{le="+Inf"}') == measured
    assert sample_value(text, "reconcile_latency_seconds_gcount") == measured
    # Cumulative, and the median falls in the first bucket holding half of them.
    buckets = [
        (float(bound), float(count))
        for bound, count in re.findall(
            r'^reconcile_latency_seconds_bucket\{le="([0-9.e+-]+)"\} (\S+)$', text, re.M
        )
    ]
    assert [count for _, count in buckets] == sorted(count for _, count in buckets)
    median = figures["reconcile"]["latency_ms"]["p50"] / 1000
    first_holding_half = next(bound for bound, count in buckets if count > measured / 2)
    assert median <= first_holding_half
    resolved = figures["resolution_seconds"]["resolved"]
    assert (
        sample_value(text, 'reconcile_unknown_outcome_resolution_seconds_bucket{le="+Inf"}')
        == resolved
    )
    assert "quantile=" not in text


HISTOGRAM_SUFFIXES = ("_bucket", "_count", "_sum")


def test_exposition_is_well_formed(traffic, operator):
    helped, typed, histograms = set(), set(), set()
    for line in scrape(operator.client).content.decode().splitlines():
        if line.startswith("# HELP "):
            helped.add(line.split()[2])
        elif line.startswith("# TYPE "):
            name, kind = line.split()[2:4]
            assert kind in ("counter", "gauge", "histogram")
            typed.add(name)
            if kind == "histogram":
                histograms.add(name)
        else:
            assert SAMPLE.match(line), line
            name = re.split(r"[{ ]", line, maxsplit=1)[0]
            family = next(
                (
                    name.removesuffix(suffix)
                    for suffix in HISTOGRAM_SUFFIXES
                    if name.removesuffix(suffix) in histograms
                ),
                name,
            )
            assert family.startswith("reconcile_") and family in helped and family in typed, line
    assert {
        "reconcile_latency_seconds",
        "reconcile_unknown_outcome_resolution_seconds",
        "reconcile_http_request_duration_seconds",
    } <= histograms


def test_metrics_token_lets_a_scraper_in_without_an_account(db, settings):
    settings.RECONCILE_METRICS_TOKEN = "scrape-me-0123456789abcdef"
    assert (
        scrape(APIClient(), HTTP_AUTHORIZATION="Bearer scrape-me-0123456789abcdef").status_code
        == 200
    )
    assert scrape(APIClient(), HTTP_AUTHORIZATION="Bearer scrape-me-wrong").status_code == 401
    assert scrape(APIClient()).status_code == 401
    # The scheme's name is case-insensitive (RFC 9110 11.1), as for keys.
    lower = "bearer scrape-me-0123456789abcdef"
    assert scrape(APIClient(), HTTP_AUTHORIZATION=lower).status_code == 200


def test_a_token_set_with_its_newline_lets_the_scraper_in(db, settings):
    # As read from a secret file: the header a scraper sends cannot end in a newline.
    settings.RECONCILE_METRICS_TOKEN = " scrape-me-0123456789abcdef\n"
    token = "Bearer scrape-me-0123456789abcdef"
    assert scrape(APIClient(), HTTP_AUTHORIZATION=token).status_code == 200


def test_a_scraper_with_the_token_is_not_throttled_as_anonymous_traffic(db, settings, monkeypatch):
    from rest_framework.settings import api_settings

    from reconcile_app.security import PrincipalRateThrottle

    rates = {**api_settings.DEFAULT_THROTTLE_RATES, "anon": "2/min"}
    monkeypatch.setattr(PrincipalRateThrottle, "THROTTLE_RATES", rates)
    settings.RECONCILE_METRICS_TOKEN = "scrape-me-0123456789abcdef"
    token = "Bearer scrape-me-0123456789abcdef"

    scrapes = [scrape(APIClient(), HTTP_AUTHORIZATION=token).status_code for _ in range(4)]

    assert scrapes == [200] * 4


def test_a_scrape_in_a_database_outage_keeps_the_request_latency(db, settings, monkeypatch):
    from django.db import OperationalError

    from reconcile_app.api import prometheus

    def unreachable(**kwargs):
        raise OperationalError("could not connect to server")

    settings.RECONCILE_METRICS_TOKEN = "scrape-me-0123456789abcdef"
    token = "Bearer scrape-me-0123456789abcdef"
    assert (
        "reconcile_metrics_database_up 1.0"
        in scrape(APIClient(), HTTP_AUTHORIZATION=token).content.decode()
    )
    monkeypatch.setattr(prometheus, "operational_metrics_with_samples", unreachable)

    response = scrape(APIClient(), HTTP_AUTHORIZATION=token)

    text = response.content.decode()
    assert response.status_code == 200
    assert "reconcile_metrics_database_up 0.0" in text
    assert "reconcile_http_request_duration_seconds_bucket" in text
    assert "reconcile_effects" not in text  # the database's figures are absent, not zero


def test_without_a_configured_token_only_people_get_in(db, settings, agent, auditor):
    settings.RECONCILE_METRICS_TOKEN = ""
    assert scrape(APIClient(), HTTP_AUTHORIZATION="Bearer ").status_code == 401
    assert scrape(agent.client).status_code == 403
    assert scrape(auditor.client).status_code == 200


# A scrape reads no hourly series (no verdicts per hour, the window's latency as one count),
# and reads the oldest readback waiting.
SCRAPE_QUERIES = JSON_QUERIES


def test_scrape_query_count_is_constant(traffic, auditor, django_assert_num_queries):
    with django_assert_num_queries(SCRAPE_QUERIES):
        assert scrape(auditor.client).status_code == 200
    open_unknown_outcome("metrics-unknown-3", minutes_ago=1)
    with django_assert_num_queries(SCRAPE_QUERIES):
        assert scrape(auditor.client).status_code == 200


def test_a_scrape_reads_no_row_per_reconcile_of_the_day(traffic, auditor, agent):
    """The day's reconcile latencies and refusals are counted in the database. A scrape read
    every timing and every refusal's reasons of the last 24 h into Python: 0.6-0.8 s a scrape
    at 21,000 reconciles that day (PostgreSQL, live, 2026-12-07), growing with the traffic,
    on a sync worker, on every web host, every scrape interval."""
    for _ in range(3):
        assert agent.post("/api/v1/reconcile", reconcile_body()).status_code == 201
    with CaptureQueriesContext(connection) as captured:
        text = scrape(auditor.client).content.decode()
    window = [
        query["sql"]
        for query in captured
        if "reconcile_app_reconciletiming" in query["sql"]
        or "reconcile_app_decisionreceipt" in query["sql"]
    ]
    assert len(window) == 2
    assert all("COUNT(" in sql.upper() for sql in window), window
    assert sample_value(text, 'reconcile_latency_seconds_bucket{le="+Inf"}') == 4
    assert sample_value(text, "reconcile_latency_seconds_gcount") == 4
    assert sample_value(text, 'reconcile_latency_seconds_bucket{le="10.0"}') == 4
    holds = [
        reason
        for reasons in DecisionReceipt.objects.filter(result="deny").values_list(
            "reasons", flat=True
        )
        for reason in reasons
        if reason["code"] == "hardship_hold"
    ]
    assert len(holds) >= 4
    assert sample_value(text, 'reconcile_refusals{code="hardship_hold",result="deny"}') == len(
        holds
    )


def test_a_scrape_says_how_long_the_oldest_readback_has_waited(traffic, auditor):
    """Under traffic some effects are always accepted and waiting: their count alone cannot
    tell a readback stuck for minutes from a steady flow, and nothing exported their age."""
    assert sample_value(scrape(auditor.client).content.decode(), READBACK_WAITING) == 0
    effect = open_unknown_outcome("metrics-waiting", minutes_ago=0)
    Effect.objects.filter(pk=effect.pk).update(
        status=EffectStatus.ACCEPTED, outcome_at=timezone.now() - timedelta(minutes=7)
    )

    waited = sample_value(scrape(auditor.client).content.decode(), READBACK_WAITING)

    assert 420 <= waited < 480


READBACK_WAITING = "reconcile_readback_oldest_waiting_age_seconds"
