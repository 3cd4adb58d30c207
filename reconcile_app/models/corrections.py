from __future__ import annotations

from django.conf import settings
from django.db import models

from reconcile_app.choices import CorrectionStatus


class Correction(models.Model):
    """A correction of one evidence entry and the blast radius it has downstream.

    The correction itself is an evidence entry (`entry`) that revokes the bad one or, with a
    replacement value, supersedes it. Status moves computing → complete once every snapshot
    downstream is marked tainted and the counts are stored (inline when small, in a Celery
    task when large).
    """

    correction_id = models.CharField(max_length=40, unique=True)
    corrected = models.ForeignKey(
        "reconcile_app.EvidenceEntry", on_delete=models.PROTECT, related_name="corrections"
    )
    entry = models.OneToOneField(
        "reconcile_app.EvidenceEntry", on_delete=models.PROTECT, related_name="correction_of"
    )
    reason = models.TextField()
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    status = models.CharField(
        max_length=10, choices=CorrectionStatus.choices, default=CorrectionStatus.COMPUTING
    )
    counts = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(db_index=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.correction_id


class SnapshotTaint(models.Model):
    """A snapshot downstream of a correction. The snapshot row itself never changes."""

    snapshot = models.ForeignKey(
        "reconcile_app.DecisionSnapshot", on_delete=models.PROTECT, related_name="taints"
    )
    correction = models.ForeignKey(Correction, on_delete=models.PROTECT, related_name="taints")
    at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["snapshot", "correction"], name="taint_unique")
        ]

    def __str__(self) -> str:
        return f"{self.snapshot_id} tainted by {self.correction_id}"
