"""How long a reconcile request took on the server (see ReconcileTiming)."""

from __future__ import annotations

import time
from datetime import timedelta

from django.utils import timezone

from reconcile_app.models import DecisionSnapshot, ReconcileTiming


def reconcile_timing_row(*, snapshot: DecisionSnapshot, arrived: float) -> ReconcileTiming:
    """The timing of the request that issued `snapshot`, from its arrival to now, when the
    snapshot's rows go out: inserted with them, so timing a decision costs no statement of
    its own (only the commit and the response body, about a millisecond, fall outside)."""
    elapsed = max(0.0, time.perf_counter() - arrived)
    return ReconcileTiming(
        snapshot=snapshot,
        received_at=timezone.now() - timedelta(seconds=elapsed),
        duration_ms=round(elapsed * 1000.0, 3),
    )
