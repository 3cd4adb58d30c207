"""How long a reconcile request took on the server (see ReconcileTiming)."""

from __future__ import annotations

import time
from datetime import datetime, timedelta

from django.utils import timezone

from reconcile_app.models import DecisionSnapshot, ReconcileTiming


def reconcile_timing_row(*, snapshot: DecisionSnapshot, arrived: float) -> ReconcileTiming:
    """The timing of the request that issued `snapshot`, from its arrival to now, when the
    snapshot's rows go out: inserted with them, so timing a decision costs no statement of
    its own (only the commit and the response body, about a millisecond, fall outside)."""
    received_at, duration_ms = request_timing(arrived)
    return ReconcileTiming(snapshot=snapshot, received_at=received_at, duration_ms=duration_ms)


def request_timing(arrived: float) -> tuple[datetime, float]:
    """(when the request arrived, milliseconds since), from its `time.perf_counter()` stamp."""
    elapsed = max(0.0, time.perf_counter() - arrived)
    return timezone.now() - timedelta(seconds=elapsed), round(elapsed * 1000.0, 3)
