"""The sandbox owner system's tables.

They were created by reconcile_app's migrations and keep those names (`db_table`): moving the
models here changed Django's state only (sandbox_app 0001), never the data. PostgreSQL's
append-only trigger on `reconcile_app_sandboxeffect` (reconcile_app 0009) stays with it.
"""

from __future__ import annotations

from django.db import models

from reconcile_app.models.append_only import AppendOnlyModel
from sandbox_app.choices import FaultKind


class SandboxRecord(models.Model):
    """A versioned record of the built-in reference owner system.

    Invariants: every write adds one to `version` (the concurrency token an effect's If-Match
    names); writes use `UPDATE ... WHERE version = expected`, so none is lost under contention.
    """

    source = models.SlugField(max_length=100)
    subject = models.CharField(max_length=200)
    field = models.CharField(max_length=200)
    value = models.JSONField(null=True)
    version = models.PositiveBigIntegerField()
    valid_from = models.DateTimeField()
    recorded_at = models.DateTimeField()

    class Meta:
        db_table = "reconcile_app_sandboxrecord"
        ordering = ["source", "subject", "field"]
        constraints = [
            models.UniqueConstraint(
                fields=["source", "subject", "field"], name="sandbox_record_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.source}/{self.subject}/{self.field}@{self.version}"


class SandboxFault(models.Model):
    """A fault injected into one sandbox source. `remaining` null: fires until cleared."""

    source = models.SlugField(max_length=100, db_index=True)
    kind = models.CharField(max_length=30, choices=FaultKind.choices)
    remaining = models.PositiveIntegerField(null=True, blank=True)
    seconds = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "reconcile_app_sandboxfault"
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.source}:{self.kind}"


class SandboxAuthority(models.Model):
    """Who owns a fact key in the sandbox owner system, and its current source revision."""

    source = models.SlugField(max_length=100)
    fact_key = models.CharField(max_length=200)
    owner = models.CharField(max_length=200, blank=True, default="")
    source_revision = models.CharField(max_length=200, blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "reconcile_app_sandboxauthority"
        ordering = ["source", "fact_key"]
        constraints = [
            models.UniqueConstraint(fields=["source", "fact_key"], name="sandbox_authority_unique")
        ]

    def __str__(self) -> str:
        return f"{self.source}/{self.fact_key}: {self.owner}@{self.source_revision}"


class SandboxAuthorityChange(AppendOnlyModel):
    """One authority a fact key had in the sandbox owner system, in force from `at`. Insert only.

    `SandboxAuthority` holds the latest answer; these rows keep every one it gave, so the owner
    can say who owned a key, at which revision, at any past time (`GET authority/{fact_key}
    ?as_of=`). The authority at T is the last change written (by id) of those with `at <= T`.
    """

    source = models.SlugField(max_length=100)
    fact_key = models.CharField(max_length=200)
    owner = models.CharField(max_length=200, blank=True, default="")
    source_revision = models.CharField(max_length=200, blank=True, default="")
    at = models.DateTimeField()

    class Meta:
        ordering = ["source", "fact_key", "at", "id"]
        indexes = [models.Index(fields=["source", "fact_key", "at"], name="sandbox_authority_at")]

    def __str__(self) -> str:
        return f"{self.source}/{self.fact_key} from {self.at}: {self.owner}@{self.source_revision}"


class SandboxEffect(AppendOnlyModel):
    """The sandbox owner's own idempotency ledger: one receipt per idempotency key.

    `applied` is false when the owner acknowledged the command but the change did not stick
    (the `drop_postcondition` fault): exactly what a readback exists to catch.
    """

    source = models.SlugField(max_length=100)
    idempotency_key = models.CharField(max_length=200)
    fingerprint = models.CharField(max_length=64)
    receipt = models.JSONField()
    applied = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "reconcile_app_sandboxeffect"
        ordering = ["source", "created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["source", "idempotency_key"], name="sandbox_effect_key_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.source}:{self.idempotency_key}"


class SandboxEvent(models.Model):
    """An event of an event-sourced sandbox source. Insert only.

    `seq` is the source's ordering key; `valid_from` is when the change held in the world,
    `recorded_at` when the owner recorded it (a late arrival has an old valid_from and a new
    recorded_at). Duplicate delivery and reordering are faults of delivery, not of storage.
    """

    source = models.SlugField(max_length=100)
    event_id = models.CharField(max_length=100)
    seq = models.BigIntegerField()
    type = models.CharField(max_length=60)
    subject = models.CharField(max_length=200, db_index=True)
    field = models.CharField(max_length=200, blank=True, default="")
    value = models.JSONField(null=True, blank=True)
    valid_from = models.DateTimeField()
    recorded_at = models.DateTimeField()

    class Meta:
        db_table = "reconcile_app_sandboxevent"
        ordering = ["source", "seq", "id"]
        constraints = [
            models.UniqueConstraint(fields=["source", "event_id"], name="sandbox_event_unique")
        ]

    def __str__(self) -> str:
        return f"{self.source}#{self.seq} {self.type}"
