"""What a quarantine would touch, read and never written: the counts the console's
confirmation dialog shows before one is created, and the `affected` counts it records when
it is applied (services/quarantine.py)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from lineage_app.selectors.blast import blast_radius
from reconcile_app.choices import EFFECT_PENDING_STATUSES, QuarantineScope
from reconcile_app.models import ClaimVerdict, DecisionSnapshot, Effect, MemoryRecord
from reconcile_app.selectors.lineage import memory_class_roots, memory_roots

DEFAULT_LOOKBACK = timedelta(days=7)


def quarantine_preview(*, scope: str, target: str, since: datetime | None = None) -> dict[str, int]:
    """What a quarantine would touch, for the confirmation dialog (nothing is written)."""
    since = since or timezone.now() - DEFAULT_LOOKBACK
    if scope == QuarantineScope.SOURCE:
        snapshots = DecisionSnapshot.objects.filter(
            reads__source__name=target, issued_at__gte=since
        )
        return {
            "snapshots": snapshots.distinct().count(),
            "decisions": snapshots.filter(result="allow").distinct().count(),
            "effects_pending": Effect.objects.filter(
                source__name=target,
                status__in=EFFECT_PENDING_STATUSES,
            ).count(),
            "effects": Effect.objects.filter(source__name=target, created_at__gte=since).count(),
        }
    if scope == QuarantineScope.MEMORY:
        # Everything the record has fed: the claims that cited it and what descends from it.
        return {
            "claims": ClaimVerdict.objects.filter(memory_id=target).count(),
            **_downstream(memory_roots(target)),
        }
    return {
        "memories": MemoryRecord.objects.filter(memory_class=target).count(),
        "memories_current": MemoryRecord.objects.filter(
            memory_class=target, status="current"
        ).count(),
        **_downstream(memory_class_roots(target)),
    }


def _downstream(roots: list[tuple[int, str]]) -> dict[str, int]:
    """Counts by kind of what descends from the roots (one query)."""
    radius = blast_radius(roots, limit=0)
    return {f"downstream_{kind}": count for kind, count in radius.counts.items()}
