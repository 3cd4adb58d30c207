"""`/metrics`: the operational figures and request latency, as prometheus_client families.

`OperationalCollector` turns what the metrics selector reads at scrape time into families:
counters for what only grows (decisions and verdicts, both insert-only), gauges for the rest.
Figures over a window (resolution time, refusals, reconcile latency) say so in their HELP
text. The window's latencies are gauge histograms: bucket counts of the last 24 hours, which
go down as well as up, so a dashboard takes `histogram_quantile()` of the buckets as they
are, without `rate()`. In the 0.0.4 text format they read as a `histogram` with `_bucket`
samples and the count and sum as the gauges `_gcount` and `_gsum`.

The request latency histogram (config/http_metrics.py) is appended as it is: a real,
cumulative histogram, summed over every gunicorn worker in multiprocess mode.
"""

from __future__ import annotations

import logging
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from django.db import DatabaseError
from django.utils.dateparse import parse_datetime
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, generate_latest
from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeHistogramMetricFamily,
    GaugeMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString
from redis.exceptions import RedisError

from config.heartbeat import sweep_age_seconds
from config.http_metrics import request_metrics
from reconcile_app.choices import DecisionResult, EffectStatus, QuarantineScope, Verdict
from reconcile_app.selectors.metrics import (
    LatencyBuckets,
    WindowSamples,
    operational_metrics_with_samples,
)

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
SCRAPE_WINDOW_HOURS = 24
# Reconcile latency runs from milliseconds to the owners' timeouts (seconds).
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
# An unknown outcome settles in seconds (the owner answers the resolver) to hours (people).
RESOLUTION_BUCKETS = (1.0, 5.0, 15.0, 60.0, 300.0, 900.0, 3600.0, 14400.0, 86400.0)
NAN = float("nan")
INF = float("inf")

Sample = tuple[Sequence[str], float]

logger = logging.getLogger(__name__)


def _counter(name: str, help_text: str, label: str, samples: Iterable[Sample]) -> Metric:
    # prometheus_client adds `_total` to a counter's name in the exposition.
    family = CounterMetricFamily(name.removesuffix("_total"), help_text, labels=[label])
    for labels, value in samples:
        family.add_metric(labels, value)
    return family


def _gauge(
    name: str, help_text: str, samples: Iterable[Sample], labels: Sequence[str] = ()
) -> Metric:
    family = GaugeMetricFamily(name, help_text, labels=list(labels))
    for values, value in samples:
        family.add_metric(values, value)
    return family


def _single(name: str, help_text: str, value: float | int | None) -> Metric:
    return GaugeMetricFamily(name, help_text, value=NAN if value is None else value)


def _by(counts: dict[str, int], known: Iterable[str] = ()) -> list[Sample]:
    values = {**dict.fromkeys(known, 0), **counts}
    return [((key,), values[key]) for key in sorted(values)]


def _window_histogram(
    name: str, help_text: str, samples: list[float], bounds: Sequence[float]
) -> Metric:
    ordered = sorted(samples)
    buckets = [(floatToGoString(bound), bisect_right(ordered, bound)) for bound in bounds]
    buckets.append(("+Inf", len(ordered)))
    return GaugeHistogramMetricFamily(name, help_text, buckets=buckets, gsum_value=sum(ordered))


def _counted_histogram(name: str, help_text: str, counted: LatencyBuckets) -> Metric:
    """A gauge histogram of bucket counts the database made (cumulative, as exposed)."""
    buckets = [
        (floatToGoString(bound), count)
        for bound, count in zip(counted.bounds_seconds, counted.cumulative, strict=True)
    ]
    buckets.append(("+Inf", counted.count))
    return GaugeHistogramMetricFamily(
        name, help_text, buckets=buckets, gsum_value=counted.sum_seconds
    )


def operational_families(figures: dict[str, Any], samples: WindowSamples) -> Iterator[Metric]:
    """The figures `operational_metrics_with_samples` returned, as metric families."""
    window = f"over the last {figures['window_hours']}h"
    totals = figures["totals"]
    yield _counter(
        "reconcile_decisions_total",
        "Reconcile decisions issued (snapshots), by result.",
        "result",
        _by(totals["decisions"], DecisionResult.values),
    )
    yield _counter(
        "reconcile_claim_verdicts_total",
        "Remembered claims classified by reconciliation, by verdict.",
        "verdict",
        _by(totals["verdicts"], Verdict.values),
    )
    yield _gauge(
        "reconcile_effects",
        "Effects by current status.",
        _by(totals["effects"], EffectStatus.values),
        ["status"],
    )
    unknown = figures["unknown_outcomes"]
    yield _single(
        "reconcile_unknown_outcomes_open",
        "Effects whose outcome is unknown now (awaiting resolution or triage).",
        unknown["open"],
    )
    yield _single(
        "reconcile_unknown_outcome_oldest_age_seconds",
        "Age of the oldest open unknown outcome (0 when there is none).",
        unknown["oldest_age_seconds"] or 0,
    )
    yield _single(
        "reconcile_readback_oldest_waiting_age_seconds",
        "Age of the oldest effect its owner accepted that is not read back yet (0 when none).",
        figures["readback_oldest_waiting_age_seconds"],
    )
    yield _window_histogram(
        "reconcile_unknown_outcome_resolution_seconds",
        f"Time from timeout to settlement of unknown outcomes settled {window} "
        "(a gauge histogram: counts of the window, not cumulative).",
        samples.resolution_seconds,
        RESOLUTION_BUCKETS,
    )
    yield _single(
        "reconcile_unknown_outcomes_resolved",
        f"Unknown outcomes settled {window}.",
        figures["resolution_seconds"]["resolved"],
    )
    yield _gauge(
        "reconcile_refusals",
        f"Reason codes of decisions that did not allow, {window}, by result and code.",
        [((row["result"], row["code"]), row["count"]) for row in figures["refusals"]],
        ["result", "code"],
    )
    yield _single(
        "reconcile_reconciles",
        f"Reconcile decisions issued {window}.",
        figures["reconcile"]["count"],
    )
    yield _counted_histogram(
        "reconcile_latency_seconds",
        f"Reconcile request time {window}, from a reconcile request's arrival to its snapshot "
        "written (a gauge histogram: counts of the window, not cumulative); the whole request, "
        "response included, is reconcile_http_request_duration_seconds.",
        samples.reconcile_latency,
    )
    for name, key, label in (
        ("escalations", "escalations", "code"),
        ("contradictions", "contradictions", "kind"),
    ):
        group = figures[key]
        yield _single(f"reconcile_{name}_open", f"Open {name}.", group["open"])
        yield _gauge(
            f"reconcile_{name}_open_by_{label}",
            f"Open {name}, by {label}.",
            _by(group[f"by_{label}"]),
            [label],
        )
        yield _single(
            f"reconcile_{name}_oldest_open_age_seconds",
            f"Age of the oldest open one of the {name} (0 when there is none).",
            group["oldest_age_seconds"] or 0,
        )
    yield _gauge(
        "reconcile_quarantines_active",
        "Quarantines in force (applying or applied), by scope.",
        _by(figures["quarantines"]["by_scope"], QuarantineScope.values),
        ["scope"],
    )
    drill = figures.get("last_drill")
    if drill is not None:
        yield from _drill_families(drill)


def _drill_families(drill: dict[str, Any]) -> Iterator[Metric]:
    yield _single(
        "reconcile_drill_last_passed",
        "1 when the last complete drill passed (the protocol let nothing escape), else 0.",
        1 if drill["passed"] else 0,
    )
    finished = parse_datetime(drill["finished_at"]) if drill["finished_at"] else None
    yield _single(
        "reconcile_drill_last_finished_timestamp_seconds",
        "When the last complete drill finished (Unix time).",
        finished.timestamp() if finished else None,
    )
    yield _gauge(
        "reconcile_drill_last_protocol_failures",
        "Failures of the protocol in the last complete drill, by kind.",
        [((name,), value) for name, value in sorted(drill["protocol"].items())],
        ["failure"],
    )


DATABASE_UP_HELP = "1 when this scrape read the database's figures, 0 when it could not."


class ScrapeCollector(Collector):
    """What one `/metrics` answer holds: the figures, read now, and request latency."""

    def collect(self) -> Iterator[Metric]:
        try:
            figures, samples = operational_metrics_with_samples(
                latency_bounds_seconds=LATENCY_BUCKETS, hours=SCRAPE_WINDOW_HOURS
            )
        except DatabaseError:
            # The request latency needs no database, and an outage is when it is watched:
            # the scrape answers without the database's figures, and says so.
            logger.warning("metrics scrape without the database's figures: unreachable")
            yield _single("reconcile_metrics_database_up", DATABASE_UP_HELP, 0)
        else:
            yield _single("reconcile_metrics_database_up", DATABASE_UP_HELP, 1)
            yield from operational_families(figures, samples)
        yield from _scheduling_families()
        yield from request_metrics()


def _scheduling_families() -> Iterator[Metric]:
    try:
        age = sweep_age_seconds()
    except (RedisError, OSError):  # the cache unreachable: the scrape answers without it
        logger.warning("metrics scrape without the sweep's age: the cache is unreachable")
        return
    # Never ran is +Inf, not NaN: an alert `> 180` is true of +Inf and false of NaN, and it
    # must fire for a deployment whose beat never started (or whose record the cache lost).
    yield _single(
        "reconcile_sweep_age_seconds",
        "Seconds since the effects sweep last ran (+Inf: never). Beat schedules it every 30 s "
        "on the readbacks queue; growing, scheduling has stopped (beat down, or no worker "
        "takes readbacks): lost readbacks are not queued again, quarantines and memories do "
        "not expire.",
        INF if age is None else age,
    )


def prometheus_exposition() -> bytes:
    return generate_latest(ScrapeCollector())
