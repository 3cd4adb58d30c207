"""Recording how long a reconcile request took on the server (see ReconcileTiming)."""

from __future__ import annotations

import time
from datetime import timedelta

from django.http import HttpRequest
from django.utils import timezone

from reconcile_app.models import DecisionSnapshot, ReconcileTiming

# Set on every request by config.http_metrics.RequestMetricsMiddleware, the outermost one.
ARRIVED_ATTRIBUTE = "arrived_perf_counter"


def reconcile_timing_record(*, snapshot: DecisionSnapshot, request: HttpRequest) -> ReconcileTiming:
    """Insert the request time of the reconcile that issued `snapshot`: from the request's
    arrival (stamped by the outermost middleware) to now, when its response is built.

    A request that reached the view without the stamp (a test calling the view directly)
    is timed from the snapshot's decision: shorter than the truth, never longer."""
    now_perf = time.perf_counter()
    arrived = getattr(request, ARRIVED_ATTRIBUTE, None)
    now = timezone.now()
    if arrived is None:
        elapsed = max(0.0, (now - snapshot.issued_at).total_seconds())
    else:
        elapsed = max(0.0, now_perf - arrived)
    return ReconcileTiming.objects.create(
        snapshot=snapshot,
        received_at=now - timedelta(seconds=elapsed),
        duration_ms=round(elapsed * 1000.0, 3),
    )
