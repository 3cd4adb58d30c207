from __future__ import annotations

from django.db import models

from reconcile_app.models.append_only import AppendOnlyModel
from reconcile_app.models.snapshots import DecisionSnapshot


class ReconcileTiming(AppendOnlyModel):
    """How long the server took over the `POST /api/v1/reconcile` request that issued a
    snapshot: from the request's arrival at the outermost middleware to the snapshot's rows
    being sent (authentication, parsing, owner reads, judgement and persistence included;
    the commit and the response body, about a millisecond together, are not: the row is
    written in the snapshot's own transaction, so timing costs no statement of its own).

    Invariants: inserted once, with the snapshot, for snapshots issued through the API only
    (drills and the demo estate decide in-process: no request, no timing); never updated.
    The overview's "reconcile request time" is the percentiles of `duration_ms` over the
    window of `received_at`.
    """

    snapshot = models.OneToOneField(
        DecisionSnapshot, on_delete=models.PROTECT, related_name="timing"
    )
    received_at = models.DateTimeField(db_index=True)
    duration_ms = models.FloatField()

    class Meta:
        ordering = ["-received_at", "-id"]

    def __str__(self) -> str:
        return f"{self.snapshot_id}: {self.duration_ms:.1f} ms"
