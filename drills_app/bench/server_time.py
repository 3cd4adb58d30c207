"""What the server itself measured for a window of load: its request histogram.

`wrk` and `hey` time a request from the moment they send it, so their figures include the
time it waits to be accepted (the listen queue while both sync workers are busy) and the
load generator's own scheduling. The server's histogram (`config/http_metrics.py`) starts
when the request reaches the outermost middleware. The two side by side say how much of a
latency is the gate's work and how much is waiting: under the agents' burst, the last of
fifty waits for the forty-nine before it. They also show when a load generator's tail is its
own: `bench http`'s commit row once had a p99 of 1.8 s from wrk's end of its requests file
while no commit took the server more than 97 ms (a gunicorn access log).

The figures are read from the files the server's workers write (PROMETHEUS_MULTIPROC_DIR),
in this process: nothing is added to the load. The histogram has buckets, not samples, so
the mean (its sum over its count) is exact and a percentile is the upper bound of the
bucket that holds it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from prometheus_client.multiprocess import MultiProcessCollector

from config.http_metrics import REQUEST_DURATION


@dataclass(frozen=True)
class Histogram:
    """One route and method's requests, every status together: cumulative counts by upper
    bound (seconds, `inf` last), the count and the sum of seconds."""

    cumulative: tuple[tuple[float, float], ...]
    count: float
    seconds: float

    def since(self, before: Histogram) -> Histogram:
        earlier = dict(before.cumulative)
        return Histogram(
            cumulative=tuple((bound, n - earlier.get(bound, 0.0)) for bound, n in self.cumulative),
            count=self.count - before.count,
            seconds=self.seconds - before.seconds,
        )

    @property
    def mean_ms(self) -> float | None:
        return self.seconds / self.count * 1000 if self.count else None

    def within_ms(self, share: float) -> float | None:
        """The upper bound of the bucket that holds this share of the requests (ms); None
        when there were none, `inf` when it is beyond the last bound."""
        if not self.count:
            return None
        for bound, n in self.cumulative:
            if n >= share * self.count:
                return bound * 1000
        return float("inf")


def server_histogram(directory: Path, route: str, method: str = "POST") -> Histogram:
    """The server's histogram for `route` (a URL pattern, `/api/v1/reconcile`) as its files
    stand now; empty before the route's first request."""
    buckets: dict[float, float] = {}
    count = seconds = 0.0
    if directory.is_dir():
        for metric in MultiProcessCollector(None, path=str(directory)).collect():
            if metric.name != REQUEST_DURATION:
                continue
            for sample in metric.samples:
                labels = sample.labels
                if labels.get("route") != route or labels.get("method") != method:
                    continue
                if sample.name.endswith("_bucket"):
                    bound = float(labels["le"])
                    buckets[bound] = buckets.get(bound, 0.0) + sample.value
                elif sample.name.endswith("_count"):
                    count += sample.value
                elif sample.name.endswith("_sum"):
                    seconds += sample.value
    return Histogram(tuple(sorted(buckets.items())), count, seconds)


@dataclass
class Served:
    """Filled in when the measured block ends (as `cpu.CpuSpent` is): the route's requests
    in it, from the server's own histogram."""

    histogram: Histogram = field(default_factory=lambda: Histogram((), 0.0, 0.0))


@contextmanager
def server_served(directory: Path, route: str, method: str = "POST") -> Iterator[Served]:
    """What the server measured for `route` while the block ran."""
    before = server_histogram(directory, route, method)
    served = Served()
    yield served
    served.histogram = server_histogram(directory, route, method).since(before)


def server_time_row(label: str, histogram: Histogram) -> str:
    """`label  requests  mean ms  p50 ≤ ms  p99 ≤ ms` for the table under the load's rows."""

    def bound(value: float | None) -> str:
        return "-" if value is None else f"{value:g}"

    mean = histogram.mean_ms
    return (
        f"{label:<28}{histogram.count:>9.0f}{'-' if mean is None else f'{mean:.1f}':>10}"
        f"{bound(histogram.within_ms(0.5)):>10}{bound(histogram.within_ms(0.99)):>10}\n"
    )


SERVER_TIME_HEADER = (
    f"{'server side (ms)':<28}{'requests':>9}{'mean':>10}{'p50 ≤':>10}{'p99 ≤':>10}"
    "  (the server's own histogram; ≤: a bucket's bound)\n"
)
