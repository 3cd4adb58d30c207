"""The last drill in the operational figures comes from whichever app registered a reader
(drills_app does, in its AppConfig.ready); reconcile_app does not import the drills."""

from __future__ import annotations

import random
from bisect import bisect_left
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from drills_app.selectors import drill_last_summary
from reconcile_app.models import ReconcileTiming
from reconcile_app.selectors import metrics
from reconcile_app.selectors.histograms import BOUNDS_MS, Histogram


@pytest.fixture
def no_reader(monkeypatch) -> None:
    monkeypatch.setattr(metrics, "_last_drill_readers", [])


def test_the_drills_app_registers_its_reader():
    assert metrics._last_drill_readers == [drill_last_summary]


def test_without_a_reader_there_is_no_last_drill(db, no_reader):
    assert metrics.operational_metrics()["last_drill"] is None


def test_a_registered_reader_is_reported_as_it_answers(db, no_reader):
    summary: dict[str, Any] = {"id": 7, "passed": True, "finished_at": None, "protocol": {}}
    metrics.last_drill_reader_register(lambda: summary)
    metrics.last_drill_reader_register(lambda: summary)  # once more replaces, never adds
    assert len(metrics._last_drill_readers) == 1
    assert metrics.operational_metrics()["last_drill"] == summary


# --- Long windows are histogrammed in the database ------------------------------------------


def histogram_of(samples: list[float]) -> Histogram:
    histogram = Histogram()
    for value in samples:
        histogram.add(bisect_left(BOUNDS_MS, value), 1, value, value)
    return histogram


@pytest.mark.parametrize("seed", range(5))
def test_histogram_percentiles_stay_within_a_bucket_of_the_exact_ones(seed):
    rng = random.Random(seed)
    samples = [rng.lognormvariate(2.5, 1.0) for _ in range(rng.randint(1, 400))]
    exact = metrics.percentiles(samples)
    estimated = histogram_of(samples).percentiles()
    assert exact and estimated
    for name in ("p50", "p95"):
        assert abs(estimated[name] - exact[name]) <= 0.25 * exact[name] + 0.001, name


def test_histogram_percentiles_are_exact_for_values_in_buckets_of_their_own():
    samples = [0.5, 4.0, 12.0, 90.0, 700.0, 2500.0]
    assert histogram_of(samples).percentiles() == metrics.percentiles(samples)


def timed_requests(agent: Any, count: int) -> list[float]:
    from django.utils import timezone

    from tests.factories import reconcile_body, seed_account_17

    seed_account_17(timezone.now())
    for _ in range(count):
        assert agent.post("/api/v1/reconcile", reconcile_body()).status_code == 201
    return list(ReconcileTiming.objects.values_list("duration_ms", flat=True))


def test_the_week_reads_latency_as_a_histogram_not_row_by_row(db, estate, agent, no_reader):
    durations = timed_requests(agent, 5)
    with CaptureQueriesContext(connection) as queries:
        week = metrics.operational_metrics(hours=168)
    timing_sql = [q["sql"] for q in queries.captured_queries if "reconciletiming" in q["sql"]]
    snapshot_sql = [
        q["sql"]
        for q in queries.captured_queries
        if "decisionsnapshot" in q["sql"]
        and "claimverdict" not in q["sql"]
        # The refusals read receipts (windowed through their snapshot), one per refusal.
        and "decisionreceipt" not in q["sql"]
    ]
    # Grouped by hour (and bucket): rows per hour, never one row per request.
    assert timing_sql and all("GROUP BY" in sql for sql in timing_sql)
    assert snapshot_sql and all("GROUP BY" in sql for sql in snapshot_sql)
    exact = metrics.percentiles(durations)
    assert week["reconcile"]["latency_measured"] == len(durations) == 5
    for name in ("p50", "p95"):
        assert abs(week["reconcile"]["latency_ms"][name] - exact[name]) <= 0.25 * exact[name]
    timed_hours = [row for row in week["hourly"] if row["latency_ms"]]
    assert timed_hours and sum(row["reconciles"] for row in week["hourly"]) == 5
    # The same data read as a day (samples) agrees on the counts.
    day = metrics.operational_metrics(hours=24)
    assert day["reconcile"]["latency_measured"] == 5
    assert day["reconcile"]["latency_ms"] == exact


def test_samples_are_for_a_day_at_most(db):
    with pytest.raises(ValueError):
        metrics.operational_metrics_with_samples(latency_bounds_seconds=(1.0,), hours=168)


@pytest.mark.parametrize(
    ("table", "column"),
    [
        ("reconcile_app_decisionsnapshot", "result"),
        ("reconcile_app_claimverdict", "verdict"),
        ("reconcile_app_effect", "status"),
    ],
)
def test_all_time_totals_count_rows_so_the_column_index_answers(db, no_reader, table, column):
    # COUNT("id") makes PostgreSQL read every row of the table (on a year's estate, 200k
    # snapshots: 1,008 ms); COUNT(*) grouped by an indexed column is an index-only scan
    # (129 ms).
    with CaptureQueriesContext(connection) as queries:
        metrics.operational_metrics()
    totals = [
        query["sql"]
        for query in queries.captured_queries
        if f'FROM "{table}" GROUP BY' in query["sql"] and f'"{table}"."{column}"' in query["sql"]
    ]
    assert totals, f"no all-time total over {table}"
    assert all("COUNT(*)" in sql for sql in totals), totals


def test_refusals_are_windowed_by_the_indexed_issue_time(db, no_reader):
    # The receipt's own `issued_at` has no index: windowing by it read every receipt
    # (200k: 119 ms, growing with the estate) to count a day's refusals.
    with CaptureQueriesContext(connection) as queries:
        metrics.operational_metrics()
    refusals = [
        query["sql"]
        for query in queries.captured_queries
        if query["sql"].startswith('SELECT "reconcile_app_decisionreceipt"."result"')
    ]
    assert refusals
    assert all('"reconcile_app_decisionsnapshot"."issued_at" >=' in sql for sql in refusals)
