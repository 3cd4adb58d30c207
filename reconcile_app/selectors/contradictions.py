"""Reads of contradictions: both values, both sources, as the API and the console show them."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q, QuerySet

from reconcile_app.canonical import rfc3339
from reconcile_app.choices import ContradictionStatus
from reconcile_app.errors import NotFound
from reconcile_app.models import Contradiction


def contradiction_representation(row: Contradiction, snapshot_id: str) -> dict[str, Any]:
    return {
        "id": row.pk,
        "kind": row.kind,
        "subject": row.subject,
        "field": row.field,
        "state": {"value": row.state_value, "source": row.state_source, "ref": row.state_ref},
        "other": {"value": row.other_value, "source": row.other_source, "ref": row.other_ref},
        "detail": row.detail,
        "status": row.status,
        "snapshot_id": snapshot_id,
        "detected_at": rfc3339(row.detected_at),
        "last_seen_at": rfc3339(row.last_seen_at or row.detected_at),
        "resolved_at": rfc3339(row.resolved_at),
        "resolved_by": row.resolved_by.username if row.resolved_by is not None else None,
        "resolution_note": row.resolution_note,
    }


def console_contradictions() -> QuerySet[Contradiction]:
    """Contradictions with their snapshot id, newest first.

    The snapshot's `content` is deferred: the list needs only its id, and content is the
    biggest column in the database.
    """
    return (
        Contradiction.objects.select_related("snapshot", "resolved_by")
        .defer("snapshot__content")
        .order_by("-detected_at", "-id")
    )


def contradiction_status_counts(queryset: QuerySet[Contradiction]) -> dict[str, int]:
    """Open, resolved and all, in one aggregate query over the already-filtered rows."""
    counts = queryset.order_by().aggregate(
        all=Count("pk"),
        open=Count("pk", filter=Q(status=ContradictionStatus.OPEN)),
        resolved=Count("pk", filter=Q(status=ContradictionStatus.RESOLVED)),
    )
    return {key: value or 0 for key, value in counts.items()}


def console_contradiction(*, contradiction_id: int) -> Contradiction:
    row = console_contradictions().filter(pk=contradiction_id).first()
    if row is None:
        raise NotFound(f"no contradiction {contradiction_id}", code="contradiction_not_found")
    return row
