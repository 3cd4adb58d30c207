"""Corrections as the console shows them: one with both its entries, the latest few, and the
corrections a snapshot is downstream of."""

from __future__ import annotations

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


def snapshot_taints(*, snapshot_id: str) -> list[SnapshotTaint]:
    """The corrections that put this snapshot in a blast radius, oldest first."""
    return list(
        SnapshotTaint.objects.filter(snapshot__snapshot_id=snapshot_id)
        .select_related("correction__corrected")
        .order_by("at", "pk")
    )
