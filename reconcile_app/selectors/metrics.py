"""Live operational figures, as plain data for charts, JSON and Prometheus.

A fixed number of queries whatever the volume (pinned by tests): aggregation happens in the
database where SQL can do it portably; latency percentiles are computed here from one
narrow query over a window of a day or less, and from the database's per-hour histogram for
a longer one (selectors/histograms.py). Reconcile latency is the request as the server saw
it: `ReconcileTiming`, from a `POST /api/v1/reconcile` request's arrival to its snapshot
written (only the commit and the response body fall outside). Snapshots decided in-process,
by drills or the demo estate, had no request and are not in it.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.core.cache import cache
from django.db.models import Count, Exists, Min, OuterRef, Q, QuerySet
from django.db.models.functions import TruncHour
from django.utils import timezone

from reconcile_app.canonical import rfc3339
from reconcile_app.choices import (
    ContradictionStatus,
    EffectStatus,
    EscalationStatus,
)
from reconcile_app.models import (
    ClaimVerdict,
    Contradiction,
    DecisionReceipt,
    DecisionSnapshot,
    Effect,
    EffectEvent,
    Escalation,
    Quarantine,
    ReconcileTiming,
)
from reconcile_app.selectors.histograms import (
    LatencyBuckets,
    hourly_histograms,
    latency_buckets,
    merged,
)
from reconcile_app.services.quarantine import in_force

LastDrillReader = Callable[[], dict[str, Any] | None]

MAX_WINDOW_HOURS = 168
# Windows up to a day read latency samples (exact percentiles, `/metrics` histograms); longer
# ones read the database's histogram (selectors/histograms.py).
SAMPLED_WINDOW_HOURS = 24
CACHE_PREFIX = "reconcile:operational-metrics"
OLDEST_UNKNOWN_LISTED = 20
# Effect timeline events that settle an unknown outcome (see services/effects/resolution.py).
SETTLING_EVENTS = ("resolution", "manual_resolution")
# One at most: see last_drill_reader_register.
_last_drill_readers: list[LastDrillReader] = []


# The all-time totals group whole tables by one indexed column. COUNT(*), not COUNT(id): a
# count of the id needs the id, so PostgreSQL reads every row of the table (a snapshot row
# carries its whole content) where COUNT(*) is answered from the column's index alone.
ROWS = Count("*")


def percentiles(samples: list[float]) -> dict[str, float] | None:
    """Median and 95th percentile (nearest rank), rounded; None without a sample."""
    if not samples:
        return None
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50": round(statistics.median(ordered), 3), "p95": round(p95, 3)}


def _hour(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def _seconds(delta: timedelta) -> float:
    return round(delta.total_seconds(), 3)


def _unknown_outcomes(now: datetime, open_count: int) -> dict[str, Any]:
    oldest = list(
        Effect.objects.filter(status=EffectStatus.UNKNOWN)
        .order_by("outcome_at", "id")
        .values_list("idempotency_key", "subject", "outcome_at", "resolution_attempts")[
            :OLDEST_UNKNOWN_LISTED
        ]
    )
    items = [
        {
            "idempotency_key": key,
            "subject": subject,
            "since": rfc3339(since),
            "age_seconds": _seconds(now - since) if since else None,
            "resolution_attempts": attempts,
        }
        for key, subject, since, attempts in oldest
    ]
    return {
        "open": open_count,
        "oldest_age_seconds": items[0]["age_seconds"] if items else None,
        "oldest": items,
    }


def unknown_outcomes_settled(queryset: QuerySet, *, since: datetime) -> QuerySet:
    """The effects of `queryset` that were unknown (their answer lost) and settled since
    `since`: the outcomes the resolution figure counts, as a list can show them."""
    events = EffectEvent.objects.filter(effect=OuterRef("pk"))
    return queryset.filter(
        Exists(events.filter(kind__in=SETTLING_EVENTS, at__gte=since)),
        Exists(events.filter(kind="timeout")),
    )


def _resolution_seconds(since: datetime) -> list[float]:
    """Timeout → settled, for unknown outcomes settled in the window (EffectEvent timings)."""
    settled_recently = EffectEvent.objects.filter(
        effect=OuterRef("pk"), kind__in=SETTLING_EVENTS, at__gte=since
    )
    rows = (
        Effect.objects.filter(Exists(settled_recently))
        .annotate(
            lost=Min("events__at", filter=Q(events__kind="timeout")),
            settled=Min("events__at", filter=Q(events__kind__in=SETTLING_EVENTS)),
        )
        .filter(lost__isnull=False)
        .values_list("lost", "settled")
    )
    return [(settled - lost).total_seconds() for lost, settled in rows if settled >= lost]


def _empty_bucket() -> dict[str, Any]:
    return {"decisions": Counter(), "verdicts": Counter(), "latency": []}


def _hourly(
    now: datetime, since: datetime, *, sampled: bool, scrape: bool = False
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Decisions and verdicts per hour by result, with reconcile latency per hour; the
    window's latency figures (exact over the samples when `sampled`). For a `/metrics`
    scrape (`scrape`), decisions per hour alone: it reads latency as bucket counts
    (`latency_buckets`) and shows no hourly series.

    Counts are grouped in the database. Latency percentiles are exact over the samples for a
    window of a day or less (`/metrics` histograms them); a longer window is read as the
    database's per-hour histogram instead (selectors/histograms.py), so its cost does not
    grow with the week's traffic.
    """
    hours: dict[datetime, dict[str, Any]] = {}
    moment = _hour(since)
    while moment <= now:
        hours[moment] = _empty_bucket()
        moment += timedelta(hours=1)
    decisions = (
        DecisionSnapshot.objects.filter(issued_at__gte=since)
        .annotate(hour=TruncHour("issued_at"))
        .values("hour", "result")
        .annotate(count=Count("id"))
        .order_by()
    )
    for row in decisions:
        bucket = hours.setdefault(_hour(row["hour"]), _empty_bucket())
        bucket["decisions"][row["result"]] += row["count"]
    if scrape:
        return _series(hours, {}), {"measured": None, "latency_ms": None}
    timings = ReconcileTiming.objects.filter(received_at__gte=since)
    latencies: list[float] = []
    per_hour: dict[datetime, dict[str, float] | None] = {}
    if sampled:
        for received_at, duration_ms in timings.values_list("received_at", "duration_ms"):
            hours.setdefault(_hour(received_at), _empty_bucket())["latency"].append(duration_ms)
            latencies.append(duration_ms)
        per_hour = {hour: percentiles(bucket["latency"]) for hour, bucket in hours.items()}
        window = {"measured": len(latencies), "latency_ms": percentiles(latencies)}
    else:
        histograms = {
            _hour(hour): histogram
            for hour, histogram in hourly_histograms(
                timings, at="received_at", value="duration_ms"
            ).items()
        }
        per_hour = {hour: histogram.percentiles() for hour, histogram in histograms.items()}
        for hour in per_hour:
            hours.setdefault(hour, _empty_bucket())
        total = merged(list(histograms.values()))
        window = {"measured": total.count, "latency_ms": total.percentiles()}
    verdicts = (
        ClaimVerdict.objects.filter(snapshot__issued_at__gte=since)
        .annotate(hour=TruncHour("snapshot__issued_at"))
        .values("hour", "verdict")
        .annotate(count=Count("id"))
        .order_by()
    )
    for row in verdicts:
        bucket = hours.setdefault(_hour(row["hour"]), _empty_bucket())
        bucket["verdicts"][row["verdict"]] += row["count"]
    return _series(hours, per_hour), window


def _series(
    hours: dict[datetime, dict[str, Any]], per_hour: dict[datetime, dict[str, float] | None]
) -> list[dict[str, Any]]:
    return [
        {
            "hour": rfc3339(hour),
            "decisions": dict(bucket["decisions"]),
            "reconciles": sum(bucket["decisions"].values()),
            "verdicts": dict(bucket["verdicts"]),
            "latency_ms": per_hour.get(hour),
        }
        for hour, bucket in sorted(hours.items())
    ]


def _refusals(since: datetime) -> list[dict[str, Any]]:
    """Every reason code of the decisions that did not allow, in the window."""
    counts: Counter[tuple[str, str]] = Counter()
    # Windowed by the snapshot's issue time (the receipt's own, copied), which is indexed:
    # the receipt's column is not, and every refusal figure would read every receipt.
    # Grouped by the reasons as written: a rule's refusal repeats the same reasons, so a day
    # of refusals is a few rows, not one per decision decoded here (every `/metrics` scrape).
    rows = (
        DecisionReceipt.objects.filter(snapshot__issued_at__gte=since)
        .exclude(result="allow")
        .values_list("result", "reasons")
        .annotate(decisions=ROWS)
        .order_by()
    )
    for result, reasons, decisions in rows:
        for reason in reasons or []:
            counts[(result, reason.get("code", ""))] += decisions
    return [
        {"result": result, "code": code, "count": count}
        for (result, code), count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]


def _grouped(queryset: Any, key: str, oldest_field: str, now: datetime) -> dict[str, Any]:
    rows = list(
        queryset.values(key).annotate(count=Count("id"), oldest=Min(oldest_field)).order_by(key)
    )
    oldest = min((row["oldest"] for row in rows), default=None)
    return {
        "open": sum(row["count"] for row in rows),
        "oldest_age_seconds": _seconds(now - oldest) if oldest else None,
        f"by_{key}": {row[key]: row["count"] for row in rows},
    }


def _quarantines() -> dict[str, Any]:
    """Quarantines in force (applying or applied, and not past their end), by scope."""
    rows = (
        Quarantine.objects.filter(in_force())
        .values("scope")
        .annotate(count=Count("id"))
        .order_by("scope")
    )
    by_scope = {row["scope"]: row["count"] for row in rows}
    return {"active": sum(by_scope.values()), "by_scope": by_scope}


def last_drill_reader_register(reader: LastDrillReader) -> None:
    """Have the figures report the last drill as `reader` returns it.

    The drills app registers its reader in `AppConfig.ready`: reconcile_app never imports the
    tools, and without one registered `last_drill` is None, as before any drill has run. The
    reader returns `{"id", "passed", "finished_at", "protocol": {failure: count}}` or None.
    """
    _last_drill_readers[:] = [reader]


def _last_drill() -> dict[str, Any] | None:
    return _last_drill_readers[0]() if _last_drill_readers else None


@dataclass(frozen=True)
class WindowSamples:
    """The window's measurements, for histograms (`/metrics`): reconcile latency counted by
    bucket in the database, and every settled unknown outcome's resolution time."""

    reconcile_latency: LatencyBuckets
    resolution_seconds: list[float]


def operational_metrics(*, now: datetime | None = None, hours: int = 24) -> dict[str, Any]:
    """Everything the overview page and `GET /api/v1/metrics` show."""
    return _figures(now=now, hours=hours, sampled=hours <= SAMPLED_WINDOW_HOURS)[0]


def operational_metrics_cached(*, hours: int, seconds: int) -> dict[str, Any]:
    """`operational_metrics` as read at most `seconds` ago, per window, in the shared cache.

    Every open overview re-reads itself every few seconds; with the figures cached for that
    long, a dozen tabs cost the database one computation per window per period, not a dozen.
    The figures say when they were read (`generated_at`), so a cached answer is not passed
    off as a fresh one.
    """
    key = f"{CACHE_PREFIX}:{hours}"
    figures = cache.get(key)
    if figures is None:
        figures = operational_metrics(hours=hours)
        cache.set(key, figures, timeout=seconds)
    return figures


def operational_metrics_with_samples(
    *, latency_bounds_seconds: Sequence[float], now: datetime | None = None, hours: int = 24
) -> tuple[dict[str, Any], WindowSamples]:
    """The figures `/metrics` shows and the window's histograms, in queries whose cost does
    not grow with the day's traffic (a window of a day at most, as for the overview's
    samples). Without the hourly series and the window's latency percentiles (None)."""
    if hours > SAMPLED_WINDOW_HOURS:
        raise ValueError(f"samples are read for {SAMPLED_WINDOW_HOURS} h at most, not {hours}")
    now = now or timezone.now()
    figures, samples = _figures(
        now=now, hours=hours, sampled=False, scrape_bounds=latency_bounds_seconds
    )
    # How late readbacks are: a count of accepted effects is never zero under traffic, so
    # only the oldest one's age tells a stuck readback from a steady flow.
    oldest = Effect.objects.filter(status=EffectStatus.ACCEPTED).aggregate(at=Min("outcome_at"))
    figures["readback_oldest_waiting_age_seconds"] = (
        _seconds(now - oldest["at"]) if oldest["at"] else 0
    )
    return figures, samples


def _figures(
    *,
    now: datetime | None,
    hours: int,
    sampled: bool,
    scrape_bounds: Sequence[float] | None = None,
) -> tuple[dict[str, Any], WindowSamples]:
    now = now or timezone.now()
    since = now - timedelta(hours=hours)
    effects_by_status = dict(Effect.objects.values_list("status").annotate(count=ROWS).order_by())
    resolution = _resolution_seconds(since)
    scrape = scrape_bounds is not None
    series, latency = _hourly(now, since, sampled=sampled, scrape=scrape)
    figures: dict[str, Any] = {
        "generated_at": rfc3339(now),
        "window_hours": hours,
        "unknown_outcomes": {
            **_unknown_outcomes(now, effects_by_status.get(EffectStatus.UNKNOWN, 0)),
            # Read back without the promised change: as unsettled as an unknown outcome, and
            # in the same queue (its own tab), so the card counts both.
            "postcondition_failed": effects_by_status.get(EffectStatus.POSTCONDITION_FAILED, 0),
        },
        "resolution_seconds": {
            "resolved": len(resolution),
            **(percentiles(resolution) or {"p50": None, "p95": None}),
        },
        "refusals": _refusals(since),
        "reconcile": {
            "count": sum(bucket["reconciles"] for bucket in series),
            "latency_measured": latency["measured"],
            "latency_ms": latency["latency_ms"] or {"p50": None, "p95": None},
        },
        "hourly": series,
        "escalations": _grouped(
            Escalation.objects.filter(status=EscalationStatus.OPEN), "code", "opened_at", now
        ),
        "contradictions": _grouped(
            Contradiction.objects.filter(status=ContradictionStatus.OPEN),
            "kind",
            "detected_at",
            now,
        ),
        "totals": {
            "decisions": dict(
                DecisionSnapshot.objects.values_list("result").annotate(count=ROWS).order_by()
            ),
            "verdicts": dict(
                ClaimVerdict.objects.values_list("verdict").annotate(count=ROWS).order_by()
            ),
            "effects": effects_by_status,
        },
        "quarantines": _quarantines(),
        "last_drill": _last_drill(),
    }
    samples = WindowSamples(
        reconcile_latency=latency_buckets(since, scrape_bounds)
        if scrape_bounds is not None
        else LatencyBuckets(bounds_seconds=(), cumulative=(), count=0, sum_seconds=0.0),
        resolution_seconds=resolution,
    )
    return figures, samples
