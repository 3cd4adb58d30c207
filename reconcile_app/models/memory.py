from __future__ import annotations

from django.db import models

from reconcile_app.choices import MemoryStatus


class MemoryRecord(models.Model):
    """A remembered belief, admitted only with its derivation.

    Invariants: `derived_from` is non-empty and every reference existed at admission; the
    value never changes. Status moves current → superseded (a newer record names it in
    `supersedes`), current → expired (past `valid_until`), or to historical_only; never back.
    Operational facts carry a `fact_key` plus the seed's owner / source_revision / valid_until.
    """

    memory_id = models.CharField(max_length=100, unique=True)
    agent = models.ForeignKey(
        "reconcile_app.Principal", on_delete=models.PROTECT, related_name="memories"
    )
    memory_class = models.SlugField(max_length=100, db_index=True)
    subject = models.CharField(max_length=200, db_index=True)
    purpose = models.CharField(max_length=150)
    field = models.CharField(max_length=150, blank=True, default="")
    fact_key = models.CharField(max_length=200, blank=True, default="", db_index=True)
    value = models.JSONField(null=True)
    note = models.TextField(blank=True, default="")
    derived_from = models.JSONField(default=list)
    # null, not "": the seed distinguishes a missing owner (owner_missing) from any name.
    owner = models.CharField(max_length=200, null=True, blank=True)  # noqa: DJ001
    source_revision = models.CharField(max_length=200, blank=True, default="")
    valid_until = models.DateField(null=True, blank=True)
    supersedes = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="superseded_by"
    )
    status = models.CharField(
        max_length=20, choices=MemoryStatus.choices, default=MemoryStatus.CURRENT, db_index=True
    )
    written_at = models.DateTimeField()
    recorded_at = models.DateTimeField()

    class Meta:
        ordering = ["-recorded_at", "-id"]

    def __str__(self) -> str:
        return self.memory_id
