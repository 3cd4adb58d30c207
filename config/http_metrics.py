"""Request latency for `/metrics`: one histogram by route pattern, method and status.

`RequestMetricsMiddleware` is the outermost middleware, so the time covers everything the
process does for a request (whitenoise's static files, authentication, the view). The route
is the URL pattern that matched (`/api/v1/effects/<str:key>`), never the path: a label per
effect key or per scanner's probe would grow without bound. A request no pattern matched is
`<unmatched>`, a static file `<static>`, and an unusual method `other`, for the same reason.

Several gunicorn workers each count their own requests. With `PROMETHEUS_MULTIPROC_DIR` set
(config/gunicorn.py sets it), prometheus_client keeps each process's counts in a file there
and a scrape adds them up, whichever worker answers it; without it, counts live in this
process and a scrape shows this process's alone (the test server, `manage.py runserver`).
The variable must be set before the process starts: prometheus_client chooses where values
live when it is first imported.

On the hot path of every request, it costs about 3.5 µs per request with values in memory and
5.7 µs in multiprocess mode (timeit, 200,000 calls around a view that does nothing, on the
2-core development machine), against a reconcile's 16 ms or more.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from prometheus_client import CollectorRegistry, Histogram, disable_created_metrics
from prometheus_client.metrics_core import Metric
from prometheus_client.multiprocess import MultiProcessCollector

from config import metric_files

logger = logging.getLogger(__name__)
MULTIPROC_DIR_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
REQUEST_DURATION = "reconcile_http_request_duration_seconds"
# From a health probe (about a millisecond) to a slow reconcile against slow owners.
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED, STATIC, OTHER_METHOD = "<unmatched>", "<static>", "other"

# A `_created` series per label set doubles what a scrape carries and says nothing a
# dashboard uses (multiprocess mode never has them either).
disable_created_metrics()

_multiproc_dir = os.environ.get(MULTIPROC_DIR_VARIABLE, "")
if _multiproc_dir:
    # Files whose space is allocated before they are mapped: on a full disk a new series is
    # an OSError, not a SIGBUS that kills the worker (config/metric_files.py).
    metric_files.install()
    # prometheus_client writes this process's file there at the first request.
    os.makedirs(_multiproc_dir, exist_ok=True)

# This process's own registry: in multiprocess mode its values are in the files, which a
# scrape reads instead.
PROCESS_REGISTRY = CollectorRegistry()
request_duration = Histogram(
    REQUEST_DURATION,
    "Time from a request's arrival to its response, by route pattern, method and status.",
    ("route", "method", "status"),
    buckets=BUCKETS,
    registry=PROCESS_REGISTRY,
)


def request_metrics() -> Iterable[Metric]:
    """The request histogram as a scrape shows it: every process's in multiprocess mode."""
    directory = os.environ.get(MULTIPROC_DIR_VARIABLE, "")
    if directory:
        return MultiProcessCollector(None, path=directory).collect()
    return PROCESS_REGISTRY.collect()


ARRIVED_ATTRIBUTE = "arrived_perf_counter"


def request_arrival(request: HttpRequest) -> float | None:
    """When the request reached the outermost middleware, on `time.perf_counter()`'s clock;
    None for a request that did not pass it (a test calling a view directly)."""
    return getattr(request, ARRIVED_ATTRIBUTE, None)


class RequestMetricsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.static_prefix = settings.STATIC_URL or "/static/"
        # A labelled child per (route, method, status) seen, looked up without
        # prometheus_client's label validation and lock on every request.
        self.observers: dict[tuple[str, str, int], Callable[[float], None]] = {}
        self.uncounted = UncountedRequests()

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        # Views that record their own request time (a reconcile's ReconcileTiming) start their
        # clock here too (`request_arrival`): the overview's span begins where this one does.
        setattr(request, ARRIVED_ATTRIBUTE, started)
        response = self.get_response(request)
        elapsed = time.perf_counter() - started
        match = request.resolver_match
        if match is not None:
            route = "/" + match.route
        elif request.path.startswith(self.static_prefix):
            route = STATIC
        else:
            route = UNMATCHED
        method = request.method if request.method in METHODS else OTHER_METHOD
        key = (route, method or OTHER_METHOD, response.status_code)
        observe = self.observers.get(key)
        if observe is None:
            try:
                observe = request_duration.labels(key[0], key[1], str(key[2])).observe
            except OSError:
                # A new series needs room in this worker's metric file, and the disk under
                # PROMETHEUS_MULTIPROC_DIR is full: the request's answer stands, its time is
                # not counted, and the next request with these labels tries again.
                self.uncounted.note()
                return response
            self.observers[key] = observe
        observe(elapsed)
        return response


class UncountedRequests:
    """Requests whose time found no room in the metric file: logged once a minute at most.

    While the disk stays full every request with a new label set fails the same way; a
    warning and a traceback for each buried the log (and filled it, on the same disk). The
    first is logged with its traceback, then one line a minute with how many since (counted
    until the next failure reports them). A failure a minute or more after the last line with
    none between starts a new episode: logged again with its traceback.
    """

    EVERY_SECONDS = 60.0

    def __init__(self) -> None:
        self.since_logged = 0
        self.logged_at: float | None = None

    def note(self) -> None:
        now = time.monotonic()
        quiet = self.logged_at is None or now - self.logged_at >= self.EVERY_SECONDS
        if quiet and not self.since_logged:
            logger.warning("request not counted in /metrics: no room for it", exc_info=True)
        elif quiet:
            logger.warning(
                "%d more requests not counted in /metrics in the last %.0f s: no room for them",
                self.since_logged + 1,
                now - (self.logged_at or now),
            )
        else:
            self.since_logged += 1
            return
        self.logged_at, self.since_logged = now, 0
