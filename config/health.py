"""Liveness and readiness for a load balancer or an orchestrator (docs/api.md, "Operating it").

`/healthz` answers while the process serves (liveness: restart me if this fails).
`/readyz` checks what a request needs — the database, the cache, the broker, and a Celery
worker's heartbeat seen within 60 s — and answers 503 when one fails (readiness: send me no
traffic). Neither needs authentication, so neither says more than "ok" or "unavailable":
no versions, hosts or error texts for an anonymous caller to collect.

A worker records its heartbeat in the cache every 15 s (config/heartbeat.py): the cache is
shared by every process (a directory in the embedded mode, Redis with services).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from django.core.cache import cache
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from config.celery import app
from config.heartbeat import HEARTBEAT_FRESH_SECONDS, HEARTBEAT_KEY

BROKER_TIMEOUT_SECONDS = 2.0
OK, UNAVAILABLE = "ok", "unavailable"


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
    with app.connection_for_write() as conn:
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


def _passes(check: Callable[[], bool]) -> bool:
    try:
        return check()
    except Exception:  # any failure of a dependency is "unavailable", never a 500
        return False


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": OK})


@never_cache
@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    checks = {name: OK if _passes(check) else UNAVAILABLE for name, check in CHECKS.items()}
    ready = all(state == OK for state in checks.values())
    return JsonResponse(
        {"status": OK if ready else UNAVAILABLE, "checks": checks}, status=200 if ready else 503
    )
