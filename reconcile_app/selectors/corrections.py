"""Reads of corrections: one with both its entries (API and console), the latest few, every
one for a list, and the corrections a snapshot is downstream of."""

from __future__ import annotations

from django.db.models import QuerySet

from reconcile_app.errors import NotFound
from reconcile_app.models import Correction, SnapshotTaint


def correction_detail(*, correction_id: str) -> Correction | None:
    """The correction with the entry it corrects, the entry recording it and its actor."""
    return (
        Correction.objects.select_related("corrected", "entry", "actor")
        .filter(correction_id=correction_id)
        .first()
    )


def recent_corrections(*, limit: int) -> list[Correction]:
    """The latest corrections (the model's order), each with the entry it corrects."""
    return list(Correction.objects.select_related("corrected")[:limit])


def corrections_listed() -> QuerySet[Correction]:
    """Every correction, newest first, with what its list item shows: one query a page."""
    return Correction.objects.select_related(
        "corrected",
        "actor",
        "entry__revokes",
        "entry__supersedes",
        "entry__recorded_by",
    )


def snapshot_taints(*, snapshot_id: str) -> list[SnapshotTaint]:
    """The corrections that put this snapshot in a blast radius, oldest first."""
    return list(
        SnapshotTaint.objects.filter(snapshot__snapshot_id=snapshot_id)
        .select_related("correction__corrected")
        .order_by("at", "pk")
    )


def correction_get(*, correction_id: str) -> Correction:
    """One correction with everything its API answer shows; 404 when there is none."""
    correction = (
        Correction.objects.select_related(
            "corrected", "entry__revokes", "entry__supersedes", "entry__recorded_by", "actor"
        )
        .filter(correction_id=correction_id)
        .first()
    )
    if correction is None:
        raise NotFound(f"no correction {correction_id}", code="correction_not_found")
    return correction
