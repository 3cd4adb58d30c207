from __future__ import annotations

from django.conf import settings
from django.db import models

from reconcile_app.choices import QuarantineScope, QuarantineStatus


class Quarantine(models.Model):
    """Operations' lever: stop trusting one source or one memory class, not the estate.

    Status: applying (in force from the moment it is created) → applied (the task has listed
    what is affected) → lifted (by a person with a reason, or by itself at `ends_at`).
    Creating or lifting one bumps the QuarantineEpoch, which is how a racing reconcile knows
    its view went out of date.
    """

    quarantine_id = models.CharField(max_length=40, unique=True)
    scope = models.CharField(max_length=15, choices=QuarantineScope.choices)
    target = models.CharField(max_length=150)
    reason = models.TextField()
    status = models.CharField(max_length=10, choices=QuarantineStatus.choices, db_index=True)
    since = models.DateTimeField(help_text="affected objects are listed from this time on")
    ends_at = models.DateTimeField(null=True, blank=True)
    affected = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField()
    applied_at = models.DateTimeField(null=True, blank=True)
    lifted_at = models.DateTimeField(null=True, blank=True)
    lifted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    lift_reason = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.scope}:{self.target} ({self.status})"


class QuarantineEpoch(models.Model):
    """One row; its counter moves whenever the set of active quarantines changes."""

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    epoch = models.PositiveBigIntegerField(default=0)

    def __str__(self) -> str:
        return f"quarantine epoch {self.epoch}"
