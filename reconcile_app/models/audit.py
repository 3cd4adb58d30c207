from __future__ import annotations

from django.conf import settings
from django.db import models

from reconcile_app.models.append_only import AppendOnlyModel


class AuditEvent(AppendOnlyModel):
    """One operator, reviewer or administrator action. Insert only.

    Records who acted (user and principal), when, why (`reason`), on what (`object_kind`,
    `object_ref`), with the request id and the object's state before and after.
    """

    at = models.DateTimeField(db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    actor_name = models.CharField(max_length=150)
    action = models.CharField(max_length=60, db_index=True)
    object_kind = models.CharField(max_length=40)
    # Room for the longest ref a service writes: a sandbox record's `source/subject/field`
    # (a source slug of 100, two identifiers of 200: API.md "Input limits").
    object_ref = models.CharField(max_length=510, db_index=True)
    reason = models.TextField(blank=True, default="")
    # Indexed: an auditor follows one request (a bulk job's many rows) by it.
    request_id = models.CharField(max_length=64, blank=True, default="", db_index=True)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        # A page's timeline of one kind of object (the quarantine page's, say) is the newest
        # rows of that kind: without this, the newest-first walk of `at` reads past every
        # row of the other kinds (a rare kind: the whole table) on each page load.
        indexes = [
            models.Index(fields=["object_kind", "at", "id"], name="audit_kind_at"),
            # The audit page suggests every actor, walked from this (selectors/loose_scan.py).
            models.Index(fields=["actor_name"], name="audit_actor_name"),
        ]

    def __str__(self) -> str:
        return f"{self.actor_name} {self.action} {self.object_kind}:{self.object_ref}"
