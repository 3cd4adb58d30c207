"""The drills' one model. Its table was created by reconcile_app's migration 0010 and keeps
its name (`db_table`): moving it here changed Django's state only (drills_app 0001)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from drills_app.choices import DrillRunKind, DrillRunStatus


class DrillRun(models.Model):
    """One run of the failure-injection drill or of the drift benchmark, and what it found.

    State machine: running → complete | failed, once. Both transitions are conditional
    UPDATEs on `status=running`, so a redelivered task cannot finish a run twice. While
    running, `progress` says how far it got (`{"done", "total", "stage"}`); a complete run
    holds its figures in `results` as plain JSON (lists and dicts of numbers and strings,
    ready to chart); a failed run keeps the error in `error`. `passed` is the drill's verdict
    (null for the benchmark, which measures and does not judge). `parameters` are the options
    the run was started with, so any two runs can be compared like with like.
    """

    kind = models.CharField(max_length=20, choices=DrillRunKind.choices)
    parameters = models.JSONField(default=dict, blank=True)
    status = models.CharField(
        max_length=10, choices=DrillRunStatus.choices, default=DrillRunStatus.RUNNING, db_index=True
    )
    progress = models.JSONField(default=dict, blank=True)
    results = models.JSONField(default=dict, blank=True)
    passed = models.BooleanField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        db_table = "reconcile_app_drillrun"
        ordering = ["-started_at", "-id"]
        indexes = [models.Index(fields=["kind", "-started_at"])]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk} ({self.status})"
