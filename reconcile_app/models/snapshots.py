from __future__ import annotations

from django.conf import settings
from django.db import models

from reconcile_app.choices import (
    Completeness,
    ContradictionKind,
    ContradictionStatus,
    DecisionResult,
    ReadStatus,
    Verdict,
)
from reconcile_app.models.append_only import AppendOnlyModel


class DecisionSnapshot(AppendOnlyModel):
    """The immutable package one decision was made on.

    Invariants: inserted once, never updated. `snapshot_id` is derived from `content_hash`,
    the SHA-256 of the canonical JSON in `content` (binding, reads, evidence manifest,
    verdicts, contradictions, decision, versions, cut-offs, completeness), so the same content
    always has the same id and replay can prove it rebuilt the same thing.
    """

    snapshot_id = models.CharField(max_length=80)
    content_hash = models.CharField(max_length=64)
    principal = models.ForeignKey(
        "reconcile_app.Principal", on_delete=models.PROTECT, related_name="snapshots"
    )
    contract = models.ForeignKey(
        "reconcile_app.Contract", on_delete=models.PROTECT, related_name="snapshots"
    )
    subject = models.CharField(max_length=200)
    purpose = models.CharField(max_length=150)
    decision_class = models.SlugField(max_length=150, db_index=False)
    proposed_action = models.CharField(max_length=150, blank=True, default="")
    result = models.CharField(max_length=10, choices=DecisionResult.choices)
    completeness = models.CharField(max_length=12, choices=Completeness.choices)
    policy_version = models.CharField(max_length=100)
    reducer_version = models.CharField(max_length=150, blank=True, default="")
    schema_version = models.CharField(max_length=20)
    valid_time_cutoff = models.DateTimeField()
    recorded_time_cutoff = models.DateTimeField()
    issued_at = models.DateTimeField(db_index=True)
    content = models.JSONField()

    class Meta:
        ordering = ["-issued_at", "-id"]
        # Declared here rather than as `unique=True` / `db_index=True` on the fields: on
        # PostgreSQL those add a second, `varchar_pattern_ops` index per text column for LIKE
        # prefixes, which nothing asks of these columns, and every reconcile pays to maintain.
        constraints = [
            models.UniqueConstraint(fields=["snapshot_id"], name="snapshot_id_unique"),
            models.UniqueConstraint(fields=["content_hash"], name="snapshot_content_hash_unique"),
        ]
        indexes = [
            models.Index(fields=["subject"], name="snapshot_subject"),
            models.Index(fields=["decision_class"], name="snapshot_decision_class"),
            models.Index(fields=["result"], name="snapshot_result"),
            models.Index(fields=["completeness"], name="snapshot_completeness"),
            models.Index(fields=["reducer_version"], name="snapshot_reducer_version"),
        ]

    def __str__(self) -> str:
        return self.snapshot_id


class StateRead(AppendOnlyModel):
    """One field as read from its owner inside a snapshot. Never stored as truth elsewhere.

    Queryable by source and version, so "every snapshot that read case-service@42" is an
    index lookup.
    """

    snapshot = models.ForeignKey(DecisionSnapshot, on_delete=models.PROTECT, related_name="reads")
    field = models.CharField(max_length=200)
    # Indexed by the (source, version) index below, which leads with it.
    source = models.ForeignKey(
        "reconcile_app.Source", on_delete=models.PROTECT, related_name="+", db_index=False
    )
    required = models.BooleanField()
    status = models.CharField(max_length=12, choices=ReadStatus.choices)
    value = models.JSONField(null=True)
    version = models.BigIntegerField(null=True)
    observed_at = models.DateTimeField(null=True)
    valid_from = models.DateTimeField(null=True)
    recorded_at = models.DateTimeField(null=True)
    read_at = models.DateTimeField()
    max_age_seconds = models.PositiveIntegerField()
    consistency = models.CharField(max_length=20)
    evidence = models.JSONField(default=list)
    detail = models.CharField(max_length=500, blank=True, default="")

    class Meta:
        ordering = ["snapshot", "id"]
        indexes = [models.Index(fields=["source", "version"])]

    def __str__(self) -> str:
        return f"{self.field}@{self.version}"


class ClaimVerdict(AppendOnlyModel):
    """A remembered claim presented with a reconcile request, and what reconciliation found.

    `memory_id` names the memory record the claim was recalled from (blank when the agent
    stated the claim without one), so "every decision that cited this record" is an index
    lookup.
    """

    snapshot = models.ForeignKey(
        DecisionSnapshot, on_delete=models.PROTECT, related_name="claim_verdicts"
    )
    index = models.PositiveIntegerField()
    subject = models.CharField(max_length=200)
    field = models.CharField(max_length=200)
    value = models.JSONField(null=True)
    written_at = models.DateTimeField(null=True)
    memory_class = models.CharField(max_length=200, blank=True, default="")
    purpose = models.CharField(max_length=150, blank=True, default="")
    derived_from = models.JSONField(default=list)
    note = models.TextField(blank=True, default="")
    memory_id = models.CharField(max_length=100, blank=True, default="")
    verdict = models.CharField(max_length=15, choices=Verdict.choices)
    reason = models.CharField(max_length=300)
    evidence = models.JSONField(default=list)

    class Meta:
        ordering = ["snapshot", "index"]
        # Plain indexes, not `db_index=True`: see DecisionSnapshot.Meta.
        indexes = [
            models.Index(fields=["memory_id"], name="claimverdict_memory_id"),
            models.Index(fields=["verdict"], name="claimverdict_verdict"),
            # The memory classes claims cite: the quarantine page lists them, walked from
            # this index (selectors/memory_class_names.py).
            models.Index(fields=["memory_class"], name="claimverdict_memory_class"),
        ]

    def __str__(self) -> str:
        return f"{self.snapshot_id}#{self.index}: {self.verdict}"


class DecisionReceipt(AppendOnlyModel):
    """The decision bound to its snapshot: proposed action, policy result, permitted actions.

    Insert only; lineage goes snapshot → decision → effect through it.
    """

    decision_id = models.CharField(max_length=80)
    snapshot = models.OneToOneField(
        DecisionSnapshot, on_delete=models.PROTECT, related_name="decision_receipt"
    )
    proposed_action = models.CharField(max_length=150, blank=True, default="")
    result = models.CharField(max_length=10, choices=DecisionResult.choices)
    permitted_actions = models.JSONField(default=list)
    reasons = models.JSONField(default=list)
    policy_version = models.CharField(max_length=100)
    issued_at = models.DateTimeField()

    class Meta:
        # A constraint, not `unique=True`: see DecisionSnapshot.Meta.
        constraints = [models.UniqueConstraint(fields=["decision_id"], name="decision_id_unique")]

    def __str__(self) -> str:
        return self.decision_id


class Contradiction(models.Model):
    """Two values for one fact that disagree without a clean temporal replacement.

    Both sides are kept as they were (value, source, reference); nothing is smoothed. Status
    moves open → resolved, by an operator, with a note.
    """

    snapshot = models.ForeignKey(
        DecisionSnapshot, on_delete=models.PROTECT, related_name="contradictions"
    )
    # The same disagreement seen again by a later snapshot (a retry) while this row is open is
    # not a new row: the snapshot joins `seen_in` and `last_seen_at` moves.
    signature = models.CharField(max_length=64, blank=True, default="")
    seen_in = models.ManyToManyField(
        DecisionSnapshot, blank=True, related_name="contradictions_seen"
    )
    last_seen_at = models.DateTimeField(null=True, blank=True)
    kind = models.CharField(max_length=20, choices=ContradictionKind.choices)
    subject = models.CharField(max_length=200)
    field = models.CharField(max_length=200)
    state_value = models.JSONField(null=True)
    state_source = models.CharField(max_length=200)
    state_ref = models.CharField(max_length=200)
    other_value = models.JSONField(null=True)
    other_source = models.CharField(max_length=200)
    other_ref = models.CharField(max_length=200)
    detail = models.CharField(max_length=300)
    status = models.CharField(
        max_length=10,
        choices=ContradictionStatus.choices,
        default=ContradictionStatus.OPEN,
    )
    detected_at = models.DateTimeField()
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    resolution_note = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["-detected_at", "-id"]
        # Plain indexes, not `db_index=True`: see DecisionSnapshot.Meta.
        indexes = [
            models.Index(fields=["signature"], name="contradiction_signature"),
            models.Index(fields=["status"], name="contradiction_status"),
        ]

    def __str__(self) -> str:
        return f"{self.subject}.{self.field}: {self.state_value!r} vs {self.other_value!r}"
