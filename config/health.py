"""Liveness and readiness for a load balancer or an orchestrator (docs/api.md, "Operating it").

`/healthz` answers while the process serves (liveness: restart me if this fails).
`/readyz` checks what a request needs — the database, the cache, the broker, and a Celery
worker's heartbeat seen within 60 s — and answers 503 when one fails (readiness: send me no
traffic). Neither needs authentication, so neither says more than "ok" or "unavailable":
no versions, hosts or error texts for an anonymous caller to collect.

A dependency that accepts a connection and never answers must not hold the probe: under
gunicorn's sync workers a hung probe is a worker that serves nothing else, and a few of them
stop `/healthz` too. So the checks run side by side, each in a thread of its own, and the
answer comes after `READY_DEADLINE_SECONDS` at most: a check unfinished by then is
unavailable. A thread cannot be stopped, so each check also has its own socket timeouts (the
broker's here, the cache's in redis-py, the database's `connect_timeout` in
config/database.py) that end it soon after; until it ends, later probes in this process count
that check unavailable without starting another, so a hung dependency holds at most one
thread per check.

A worker records its heartbeat in the cache every 15 s (config/heartbeat.py): the cache is
shared by every process (a directory in the embedded mode, Redis with services).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from django.core.cache import cache
from django.db import connection, connections
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from config.celery import app
from config.heartbeat import HEARTBEAT_FRESH_SECONDS, HEARTBEAT_KEY

READY_DEADLINE_SECONDS = 2.0
BROKER_TIMEOUT_SECONDS = 2.0
OK, UNAVAILABLE = "ok", "unavailable"

logger = logging.getLogger(__name__)


def _database() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        return cursor.fetchone() == (1,)


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
    seen = cache.get(HEARTBEAT_KEY)
    return bool(seen) and time.time() - float(seen["at"]) <= HEARTBEAT_FRESH_SECONDS


CHECKS: dict[str, Callable[[], bool]] = {
    "database": _database,
    "cache": _cache,
    "broker": _broker,
    "worker": _worker,
}


class _CheckRun(threading.Thread):
    """One check in a daemon thread (never joined at exit: it may be the hung one)."""

    def __init__(self, name: str, check: Callable[[], bool]) -> None:
        super().__init__(name=f"readyz-{name}", daemon=True)
        self.check_name, self.check, self.passed = name, check, False

    def run(self) -> None:
        try:
            self.passed = bool(self.check())
        except Exception:  # any failure of a dependency is "unavailable", never a 500
            self.passed = False
        finally:
            # This thread's own database connection (Django's are per thread) ends with it.
            connections.close_all()
            with _running_lock:
                _running.pop(self.check_name, None)


# The checks of this process still running, by name: at most one run of each at a time.
_running: dict[str, _CheckRun] = {}
_running_lock = threading.Lock()


def checks_running() -> set[str]:
    """The checks an earlier probe of this process started that have not ended yet."""
    with _running_lock:
        return set(_running)


def ready_checks(deadline_seconds: float) -> dict[str, bool]:
    """Every check's result within one deadline; unfinished and still-hung checks fail."""
    started: list[_CheckRun] = []
    with _running_lock:
        for name, check in CHECKS.items():
            if name not in _running:
                _running[name] = _CheckRun(name, check)
                started.append(_running[name])
    for run in started:
        run.start()
    until = time.monotonic() + deadline_seconds
    for run in started:
        run.join(max(0.0, until - time.monotonic()))
    finished = {run.check_name: run.passed for run in started if not run.is_alive()}
    return {name: finished.get(name, False) for name in CHECKS}


@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": OK})


@never_cache
@require_safe
def readyz(request: HttpRequest) -> JsonResponse:
    passed = ready_checks(READY_DEADLINE_SECONDS)
    ready = all(passed.values())
    response = JsonResponse(
        {
            "status": OK if ready else UNAVAILABLE,
            "checks": {name: OK if ok else UNAVAILABLE for name, ok in passed.items()},
        },
        status=200 if ready else 503,
    )
    if not ready:
        # Unready is a state the probe reports, not a server error: one warning that names
        # the failing checks (for the operator; the anonymous answer says no more than the
        # words), instead of Django's ERROR for every 5xx.
        failing = ", ".join(name for name, ok in passed.items() if not ok)
        logger.warning("not ready: %s unavailable", failing)
        response._has_been_logged = True  # type: ignore[attr-defined]
    return response
