from __future__ import annotations

from django.db import models

from reconcile_app.choices import MemoryAdmission, MemoryKind, MemoryStatus
from reconcile_app.models.append_only import AppendOnlyModel


class MemoryClass(models.Model):
    """A declared class of memory, with its kind's rules (loaded from a YAML file).

    Invariants: `name` is unique; procedural and policy classes always admit by review.
    Reloading a file updates the row in place: classes are configuration, while the memories
    written under them keep their class name as written.
    """

    name = models.SlugField(max_length=100, unique=True)
    kind = models.CharField(max_length=15, choices=MemoryKind.choices)
    owner = models.CharField(max_length=200)
    # Days a memory written without valid_until stays in force (None: no default expiry).
    default_ttl_days = models.PositiveIntegerField(null=True, blank=True)
    admission = models.CharField(max_length=10, choices=MemoryAdmission.choices)
    description = models.TextField(blank=True, default="")
    document = models.JSONField(default=dict)
    source_path = models.CharField(max_length=500, blank=True, default="")
    loaded_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "memory classes"

    def __str__(self) -> str:
        return self.name


class MemoryRecord(models.Model):
    """A remembered belief, admitted only with its derivation.

    Invariants: `derived_from` is non-empty and every reference existed at admission; the
    value never changes; `memory_class` names a declared class. Status: admitted directly as
    `current`, or by review as `suggested` → `active` (promoted) | `rejected`; a memory in force
    (current or active) moves to `superseded` (a newer record names it in `supersedes`),
    `expired` (past `valid_until`, for the kinds that expire) or `historical_only`; never back.
    Every move is also a MemoryStatusEvent, so what was believed at any time can be answered.
    Operational facts carry a `fact_key` plus the seed's owner / source_revision / valid_until.
    """

    memory_id = models.CharField(max_length=100, unique=True)
    agent = models.ForeignKey(
        "reconcile_app.Principal", on_delete=models.PROTECT, related_name="memories"
    )
    memory_class = models.SlugField(max_length=100, db_index=True)
    subject = models.CharField(max_length=200, db_index=True)
    purpose = models.CharField(max_length=150)
    field = models.CharField(max_length=200, blank=True, default="")
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
        # The lists' order: a page is read from the index, not by sorting every memory.
        indexes = [models.Index(fields=["recorded_at", "id"], name="memory_recorded_at")]

    def __str__(self) -> str:
        return self.memory_id


class MemoryStatusEvent(AppendOnlyModel):
    """A memory record's status from `at` on. Insert only.

    The record keeps its latest status; these rows keep every one it had, so "what did we
    believe last week?" is the status each record had then (seed 001).
    """

    memory = models.ForeignKey(MemoryRecord, on_delete=models.PROTECT, related_name="statuses")
    status = models.CharField(max_length=20, choices=MemoryStatus.choices)
    at = models.DateTimeField(db_index=True)
    cause = models.CharField(max_length=300, blank=True, default="")

    class Meta:
        ordering = ["memory", "at", "id"]
        indexes = [models.Index(fields=["memory", "at"])]

    def __str__(self) -> str:
        return f"{self.memory_id} {self.status} at {self.at}"
