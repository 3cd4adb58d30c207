from __future__ import annotations

from django.db import models

from reconcile_app.choices import EvidenceKind
from reconcile_app.models.append_only import AppendOnlyModel


class EvidenceEntry(AppendOnlyModel):
    """An append-only ledger entry.

    Invariants: inserted once, never updated or deleted; a correction is a new entry whose
    `revokes` or `supersedes` points at the entry it corrects. `seq` is gapless and `hash`
    chains every entry to the previous one (`prev_hash`), so `verify_ledger` detects any edit.
    Two clocks: `observed_at` is when the fact held (valid time), `recorded_at` when the ledger
    learned it (recorded time).
    """

    seq = models.PositiveBigIntegerField(unique=True)
    evidence_id = models.CharField(max_length=100, unique=True)
    kind = models.CharField(max_length=20, choices=EvidenceKind.choices)
    subject = models.CharField(max_length=200, db_index=True)
    field = models.CharField(max_length=200, blank=True, default="")
    value = models.JSONField(null=True, blank=True)
    source = models.CharField(max_length=200)
    observed_at = models.DateTimeField()
    recorded_at = models.DateTimeField(db_index=True)
    revokes = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="revoked_by"
    )
    supersedes = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="superseded_by"
    )
    derived_from = models.JSONField(default=list, blank=True)
    note = models.TextField(blank=True, default="")
    recorded_by = models.ForeignKey(
        "reconcile_app.Principal", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64, unique=True)

    class Meta:
        ordering = ["seq"]
        indexes = [models.Index(fields=["subject", "field", "recorded_at"])]
        verbose_name_plural = "evidence entries"

    def __str__(self) -> str:
        return self.evidence_id


class LedgerHead(models.Model):
    """The single row that serialises appends to the evidence hash chain.

    Appenders lock it (`select_for_update`) so two concurrent appends cannot both chain onto
    the same predecessor.
    """

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    seq = models.PositiveBigIntegerField(default=0)
    hash = models.CharField(max_length=64, default="0" * 64)

    def __str__(self) -> str:
        return f"ledger head #{self.seq}"


class EvidenceSupport(models.Model):
    """The latest unwithdrawn entry stating each value of a subject's field: what a reconcile
    reads instead of the field's whole history, so its cost does not grow with the ledger.

    Derived, not evidence: kept in the appending transaction by services/evidence_support.py
    and rebuilt from the ledger by migration 0019. `entry` is null once every entry stating
    the value was withdrawn; `changed_at` is the recorded time of the entry that last moved
    the row, so a reader with an earlier cut-off knows to read the ledger itself.
    """

    subject = models.CharField(max_length=200)
    field = models.CharField(max_length=200, blank=True, default="")
    value_key = models.CharField(max_length=64, help_text="SHA-256 of the value's canonical JSON")
    # No database constraint: a derived index must never stand in the way of the ledger
    # (verify_ledger is how a removed entry is found, not a foreign key error).
    entry = models.ForeignKey(
        EvidenceEntry,
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="+",
    )
    changed_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["subject", "field", "value_key"], name="evidence_support_one_per_value"
            )
        ]

    def __str__(self) -> str:
        return f"{self.subject}.{self.field} latest {self.entry_id}"
