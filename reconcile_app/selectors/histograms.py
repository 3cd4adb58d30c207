"""Percentiles from the database's histogram, for windows too long to read row by row.

The 7 d overview would otherwise load every reconcile timing of the week into Python. Here
SQL groups them by hour and by a log-spaced bucket of `duration_ms` (each bucket 25 % wider
than the one below, from 0.1 ms to ten minutes) and returns, per group, the count and the
smallest and largest duration: a few rows per hour however busy the hour was. A percentile
is then found by rank, as `metrics.percentiles` does over the samples, and placed within its
bucket by linear interpolation between that bucket's own smallest and largest values: exact
when the bucket holds one value (or two, at their ends), and never off by more than the
bucket's spread otherwise (under 25 % of the value).

`/metrics` needs counts at fixed bounds instead (`latency_buckets`): one aggregate query.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Case, Count, IntegerField, Max, Min, Q, QuerySet, Sum, Value, When
from django.db.models.functions import TruncHour

from reconcile_app.models import ReconcileTiming

FIRST_BOUND_MS = 0.1
GROWTH = 1.25
LAST_BOUND_MS = 600_000.0


def _bounds() -> list[float]:
    bounds = [FIRST_BOUND_MS]
    while bounds[-1] < LAST_BOUND_MS:
        bounds.append(bounds[-1] * GROWTH)
    return bounds


BOUNDS_MS = _bounds()


@dataclass
class Bucket:
    count: int = 0
    low: float = float("inf")
    high: float = float("-inf")

    def add(self, count: int, low: float, high: float) -> None:
        self.count += count
        self.low = min(self.low, low)
        self.high = max(self.high, high)


@dataclass
class Histogram:
    """Counts of one hour (or the window) by bucket index, with each bucket's extremes."""

    buckets: dict[int, Bucket] = field(default_factory=lambda: defaultdict(Bucket))

    @property
    def count(self) -> int:
        return sum(bucket.count for bucket in self.buckets.values())

    def add(self, index: int, count: int, low: float, high: float) -> None:
        self.buckets[index].add(count, low, high)

    def at_rank(self, rank: int) -> float:
        """The value at 0-based `rank` of the sorted samples, as the buckets place it."""
        seen = 0
        for index in sorted(self.buckets):
            bucket = self.buckets[index]
            if rank < seen + bucket.count:
                if bucket.count == 1:
                    return bucket.low
                share = (rank - seen) / (bucket.count - 1)
                return bucket.low + (bucket.high - bucket.low) * share
            seen += bucket.count
        raise IndexError(rank)

    def percentiles(self) -> dict[str, float] | None:
        """Median and 95th percentile (nearest rank), as `metrics.percentiles` defines them."""
        total = self.count
        if not total:
            return None
        middle = (total - 1) / 2
        median = (self.at_rank(int(middle)) + self.at_rank(int(middle + 0.5))) / 2
        p95 = self.at_rank(min(total - 1, round(0.95 * (total - 1))))
        return {"p50": round(median, 3), "p95": round(p95, 3)}


def _bucket_of(field_name: str) -> Case:
    whens = [
        When(**{f"{field_name}__lte": bound}, then=Value(index))
        for index, bound in enumerate(BOUNDS_MS)
    ]
    return Case(*whens, default=Value(len(BOUNDS_MS)), output_field=IntegerField())


def hourly_histograms(queryset: QuerySet, *, at: str, value: str) -> dict[datetime, Histogram]:
    """Per hour of `at`, the histogram of `value` (milliseconds): one grouped query."""
    rows = (
        queryset.annotate(hour=TruncHour(at), bucket=_bucket_of(value))
        .values("hour", "bucket")
        .annotate(count=Count("pk"), low=Min(value), high=Max(value))
        .order_by()
    )
    hours: dict[datetime, Histogram] = defaultdict(Histogram)
    for row in rows:
        hours[row["hour"]].add(row["bucket"], row["count"], row["low"], row["high"])
    return hours


def merged(histograms: list[Histogram]) -> Histogram:
    """The window's histogram: every hour's buckets added together."""
    total = Histogram()
    for histogram in histograms:
        for index, bucket in histogram.buckets.items():
            total.add(index, bucket.count, bucket.low, bucket.high)
    return total


@dataclass(frozen=True)
class LatencyBuckets:
    """The window's reconcile latencies as the database counts them: how many took at most
    each bound (cumulative, in the bounds' order), how many in all, and their sum."""

    bounds_seconds: tuple[float, ...]
    cumulative: tuple[int, ...]
    count: int
    sum_seconds: float


def latency_buckets(since: datetime, bounds_seconds: Sequence[float]) -> LatencyBuckets:
    """One aggregate over the window's timings, whatever the day's traffic: a scrape that
    read every timing into Python took 0.6-0.8 s at 21,000 reconciles a day."""
    counts = ReconcileTiming.objects.filter(received_at__gte=since).aggregate(
        total=Count("*"),
        sum_ms=Sum("duration_ms"),
        **{
            f"le_{index}": Count("pk", filter=Q(duration_ms__lte=bound * 1000))
            for index, bound in enumerate(bounds_seconds)
        },
    )
    return LatencyBuckets(
        bounds_seconds=tuple(bounds_seconds),
        cumulative=tuple(counts[f"le_{index}"] for index in range(len(bounds_seconds))),
        count=counts["total"],
        sum_seconds=(counts["sum_ms"] or 0.0) / 1000,
    )
