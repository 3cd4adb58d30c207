"""Liveness and readiness for a load balancer or an orchestrator (docs/api.md, "Operating it").

`/healthz` answers while the process serves (liveness: restart me if this fails).
`/readyz` checks what a request needs — the database, the cache, the broker, and a Celery
worker's heartbeat seen within 60 s — and answers 503 when one fails (readiness: send me no
traffic). Neither needs authentication, so neither says more than "ok" or "unavailable":
no versions, hosts or error texts for an anonymous caller to collect.

A dependency that accepts a connection and never answers must not hold the probe: under
gunicorn's sync workers a hung probe is a worker that serves nothing else, and a few of them
stop `/healthz` too. So each check runs on a thread of its own, kept for the process (with
its own cache client, reused from probe to probe), and the answer
comes after `READY_DEADLINE_SECONDS` at most: a check unfinished by then is unavailable.
A probe that finds a check already running (another probe's, in a threaded server) waits for
that run if it is younger than the deadline; a run older than that is hung, and counts
unavailable at once. A thread cannot be stopped, so each check also has its own timeouts
(the broker's socket timeouts here, the cache's in redis-py, the database's connect and TCP
timeouts in config/database.py) that end a hung run soon after.

A worker records its heartbeat in the cache every 15 s (config/heartbeat.py): the cache is
shared by every process (a directory in the embedded mode, Redis with services).
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Callable

from django.core.cache import cache
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_safe

from config.celery import app
from config.heartbeat import (
    HEARTBEAT_FRESH_SECONDS,
    LEGACY_HEARTBEAT_KEY,
    READY_QUEUES,
    heartbeat_key,
)

READY_DEADLINE_SECONDS = 2.0
BROKER_TIMEOUT_SECONDS = 2.0
OK, UNAVAILABLE = "ok", "unavailable"

logger = logging.getLogger(__name__)


class NotReady(Exception):
    """A check's failure with what an operator needs to act on: in the warning the web
    process logs, never in the anonymous answer. `/readyz` says only "worker: unavailable";
    with workers per queue the on-call engineer must know which queue has none."""


def _database() -> bool:
    with connection.cursor() as cursor:
        if connection.vendor != "postgresql":
            cursor.execute("SELECT 1")
            return cursor.fetchone() == (1,)
        # Reachable is not enough: a standby (the old primary after a failover) or a
        # database set read-only answers a SELECT and refuses every reconcile and commit.
        cursor.execute("SELECT current_setting('transaction_read_only') = 'off'")
        return cursor.fetchone() == (True,)


def _cache() -> bool:
    probe = f"reconcile:readyz:{time.monotonic_ns()}"
    cache.set(probe, OK, timeout=10)
    found = cache.get(probe) == OK
    cache.delete(probe)
    return found


def _broker() -> bool:
    # kombu's Redis transport reads without a timeout unless told: a broker that accepted the
    # connection and never answers its PING would hold this thread for good.
    timeouts = dict.fromkeys(("socket_timeout", "socket_connect_timeout"), BROKER_TIMEOUT_SECONDS)
    with app.connection_for_write(transport_options=timeouts) as conn:
        conn.ensure_connection(max_retries=1, timeout=BROKER_TIMEOUT_SECONDS)
    return True


def _worker() -> bool:
    """A worker has said it is alive within the minute for each queue the product needs (or,
    while only workers of the release before run, that one of them is alive). Raises
    `NotReady` naming the queues without one, for the operator's log."""
    keys = [heartbeat_key(queue) for queue in READY_QUEUES]
    seen = cache.get_many([*keys, LEGACY_HEARTBEAT_KEY])
    now = time.time()

    def fresh(key: str) -> bool:
        return key in seen and now - float(seen[key]["at"]) <= HEARTBEAT_FRESH_SECONDS

    def last_seen(queue: str, key: str) -> str:
        if key not in seen:
            return f"{queue} (none seen)"
        age = now - float(seen[key]["at"])
        return f"{queue} (last from {seen[key]['hostname']}, {age:.0f} s ago)"

    older = LEGACY_HEARTBEAT_KEY in seen and "queues" not in seen[LEGACY_HEARTBEAT_KEY]
    if older and not any(key in seen for key in keys):
        missing = [] if fresh(LEGACY_HEARTBEAT_KEY) else [("any queue", LEGACY_HEARTBEAT_KEY)]
    else:
        missing = [(queue, heartbeat_key(queue)) for queue in READY_QUEUES]
        missing = [(queue, key) for queue, key in missing if not fresh(key)]
    if missing:
        raise NotReady(
            f"no worker heartbeat within {HEARTBEAT_FRESH_SECONDS:.0f} s for "
            + ", ".join(last_seen(queue, key) for queue, key in missing)
        )
    return True


CHECKS: dict[str, Callable[[], bool]] = {
    "database": _database,
    "cache": _cache,
    "broker": _broker,
    "worker": _worker,
}


class _Run:
    """One run of one check: when it started, and its result once `done` is set."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.done = threading.Event()
        self.passed = False
        self.reason = ""  # a NotReady's words, for the log


class _Checker(threading.Thread):
    """Runs one check, one run at a time, for as long as the process lives (a daemon: never
    joined at exit, as it may be the hung one)."""

    def __init__(self, name: str) -> None:
        super().__init__(name=f"readyz-{name}", daemon=True)
        self.check_name = name
        self.runs: queue.SimpleQueue[_Run] = queue.SimpleQueue()

    def run(self) -> None:
        while True:
            run = self.runs.get()
            try:
                run.passed = bool(CHECKS[self.check_name]())
            except NotReady as exc:
                run.passed, run.reason = False, str(exc)
            except Exception:  # any failure of a dependency is "unavailable", never a 500
                run.passed = False
            finally:
                # A new database connection per run (the database check's only): one kept
                # by this thread would be a session no request ever renews or ends.
                connection.close()
                run.done.set()


_lock = threading.Lock()
_checkers: dict[str, _Checker] = {}
_current: dict[str, _Run] = {}
_checkers_pid = 0


def _run_of(name: str, deadline_seconds: float) -> _Run | None:
    """The run this probe waits for: the running one if it is younger than the deadline,
    else a new one; None for a hung run. Called under `_lock`."""
    running = _current.get(name)
    if running is not None and not running.done.is_set():
        return running if time.monotonic() - running.started < deadline_seconds else None
    if name not in _checkers:
        _checkers[name] = _Checker(name)
        _checkers[name].start()
    _current[name] = run = _Run()
    _checkers[name].runs.put(run)
    return run


def checks_running() -> set[str]:
    """The checks of this process with a run not finished yet."""
    with _lock:
        return {name for name, run in _current.items() if not run.done.is_set()}


def ready_checks(deadline_seconds: float) -> dict[str, bool]:
    """Every check's result within one deadline; unfinished and hung checks fail."""
    return {name: passed for name, (passed, _) in _ready_results(deadline_seconds).items()}


def _ready_results(deadline_seconds: float) -> dict[str, tuple[bool, str]]:
    """Every check's result within one deadline, with the reason a failed one gave."""
    global _checkers_pid
    with _lock:
        if _checkers_pid != os.getpid():  # a forked child has none of its parent's threads
            _checkers.clear()
            _current.clear()
            _checkers_pid = os.getpid()
        runs = {name: _run_of(name, deadline_seconds) for name in CHECKS}
    until = time.monotonic() + deadline_seconds
    results = {}
    for name, run in runs.items():
        remaining = max(0.0, until - time.monotonic())
        finished = run is not None and run.done.wait(remaining)
        passed = finished and run is not None and run.passed
        results[name] = (passed, run.reason if finished and run is not None else "")
    return results


# Probes change nothing and carry no cookie: a POST is refused as a method (405), not as a
# missing CSRF token (the CSRF middleware's 403 HTML page, before the method check ran).
@csrf_exempt
@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": OK})


@csrf_exempt
@never_cache
@require_safe
def readyz(request: HttpRequest) -> JsonResponse:
    results = _ready_results(READY_DEADLINE_SECONDS)
    passed = {name: ok for name, (ok, _) in results.items()}
    ready = all(passed.values())
    response = JsonResponse(
        {
            "status": OK if ready else UNAVAILABLE,
            "checks": {name: OK if ok else UNAVAILABLE for name, ok in passed.items()},
        },
        status=200 if ready else 503,
    )
    failing = tuple(name for name, ok in passed.items() if not ok)
    reasons = "; ".join(f"{name}: {why}" for name, (ok, why) in results.items() if why)
    readiness_log.note(failing, reasons)
    if not ready:
        response._has_been_logged = True  # type: ignore[attr-defined]
    return response


class ReadinessLog:
    """What the probes found, told once per change and once a minute while it lasts.

    Unready is a state the probe reports, not a server error: a warning that names the
    failing checks (for the operator; the anonymous answer says no more than the words),
    instead of Django's ERROR for every 5xx. A load balancer and an orchestrator each probe
    every few seconds, so a line per probe buried an outage's log under copies of one line;
    now a new failing set is logged at once, the same set again after a minute with how long
    and how many probes, and the return to ready once (how long it was unready). Per process.
    """

    EVERY_SECONDS = 60.0

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.failing: tuple[str, ...] = ()
        self.since = self.logged_at = 0.0
        self.probes = 0

    def note(self, failing: tuple[str, ...], reasons: str) -> None:
        now = self._clock()
        with self._lock:
            was = self.failing
            if not failing:
                if was:
                    logger.info(
                        "ready again: %s available after %.0f s unready",
                        ", ".join(was),
                        now - self.since,
                    )
                    self.reset()
                return
            detail = f" ({reasons})" if reasons else ""
            unavailable = ", ".join(failing)
            if failing != was:
                logger.warning("not ready: %s unavailable%s", unavailable, detail)
                self.failing, self.since, self.logged_at, self.probes = failing, now, now, 0
            elif now - self.logged_at >= self.EVERY_SECONDS:
                logger.warning(
                    "still not ready: %s unavailable for %.0f s, %d probes since the last line%s",
                    unavailable,
                    now - self.since,
                    self.probes + 1,
                    detail,
                )
                self.logged_at, self.probes = now, 0
            else:
                self.probes += 1


readiness_log = ReadinessLog()
