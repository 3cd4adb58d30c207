from __future__ import annotations

from django.db import models

from reconcile_app.choices import EffectStatus
from reconcile_app.models.append_only import AppendOnlyModel


class Effect(models.Model):
    """One effect request, committed against the version a snapshot read.

    State machine (docs/api.md): recorded → sent → accepted | rejected | unknown;
    accepted → verified | postcondition_failed; unknown → accepted | not_executed (or stays
    unknown: unresolved, in the operators' triage queue); rejected → recorded when a request
    that never reached the owner (`owner_unavailable`) is retried with its key. The row is
    written durably in `recorded` before anything is sent, so a crash can never lose a sent
    request. Every transition is a conditional UPDATE on the expected status, so two workers
    cannot both move it. `fingerprint` binds the idempotency key to the request it was first
    used for. `compensates` is set once, when the row is recorded, on an effect an operator
    committed through the same gate to undo another; the original's `compensations` are the
    reverse (its `compensated_by` is the latest of them that was not refused).
    `last_check_error` is a note, not a state: it never moves the status.
    """

    idempotency_key = models.CharField(max_length=200, unique=True)
    fingerprint = models.CharField(max_length=64)
    principal = models.ForeignKey(
        "reconcile_app.Principal", on_delete=models.PROTECT, related_name="effects"
    )
    snapshot = models.ForeignKey(
        "reconcile_app.DecisionSnapshot", on_delete=models.PROTECT, related_name="effects"
    )
    decision = models.ForeignKey(
        "reconcile_app.DecisionReceipt", on_delete=models.PROTECT, related_name="effects"
    )
    source = models.ForeignKey("reconcile_app.Source", on_delete=models.PROTECT, related_name="+")
    # An `escalate` snapshot authorises only through its approved escalation: which one, and
    # the reviewer who approved it, as they stood when the effect was recorded.
    escalation = models.ForeignKey(
        "reconcile_app.Escalation",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="effects_authorised",
    )
    approved_by = models.CharField(max_length=150, blank=True, default="")
    compensates = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="compensations",
    )
    action = models.CharField(max_length=150)
    subject = models.CharField(max_length=200)
    field = models.CharField(max_length=200)
    resulting_value = models.JSONField(null=True)
    expected_version = models.BigIntegerField()
    status = models.CharField(
        max_length=24,
        choices=EffectStatus.choices,
        default=EffectStatus.RECORDED,
        db_index=True,
    )
    receipt = models.JSONField(null=True, blank=True)
    resulting_version = models.BigIntegerField(null=True, blank=True)
    outcome = models.JSONField(default=dict, blank=True)  # rejection or unknown details
    created_at = models.DateTimeField(db_index=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    outcome_at = models.DateTimeField(null=True, blank=True)
    verified_at = models.DateTimeField(null=True, blank=True)
    readback_attempts = models.PositiveIntegerField(default=0)
    resolution_attempts = models.PositiveIntegerField(default=0)
    next_check_at = models.DateTimeField(null=True, blank=True, db_index=True)
    # Why the latest readback or resolution could not conclude (owner or ledger unavailable,
    # source quarantined, a replica behind the commit), and when: what an operator needs when
    # attempts keep climbing. Cleared when one concludes.
    last_check_error = models.CharField(max_length=500, blank=True, default="")
    last_check_error_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["status", "next_check_at"]),
            # A readback looks for other commands the owner took on the same target.
            models.Index(fields=["subject", "field", "source"], name="effect_target"),
        ]

    def __str__(self) -> str:
        return f"{self.idempotency_key} ({self.status})"


class EffectEvent(AppendOnlyModel):
    """One step of an effect's timeline (recorded, sent, receipt, timeout, readback, …).

    Insert only; the console's timeline is these rows in order.
    """

    effect = models.ForeignKey(Effect, on_delete=models.PROTECT, related_name="events")
    at = models.DateTimeField()
    kind = models.CharField(max_length=40)
    detail = models.JSONField(default=dict, blank=True)
    evidence_id = models.CharField(max_length=100, blank=True, default="")
    actor = models.CharField(max_length=150, blank=True, default="")

    class Meta:
        ordering = ["at", "id"]
        # `GET /api/v1/effects?changed_after=` finds the effects that moved in a window
        # through their events' times (filtersets.EffectFilterSet).
        indexes = [models.Index(fields=["at"], name="effectevent_at_idx")]

    def __str__(self) -> str:
        return f"{self.effect_id}: {self.kind}"
