from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from reconcile_app.choices import EscalationStatus


class Escalation(models.Model):
    """A question only a person may answer, routed to an owner, blocking until decided.

    Opened by `select_current` (authority_ambiguous, owner_missing: bound to a fact key, which
    it freezes for writes), by a reconcile decision with result `escalate` (bound to the
    snapshot; once approved, that snapshot and the retries that joined it authorise exactly
    the proposed action), by a memory written to a reviewed class (a promotion), or by an
    operator for an effect whose outcome nobody can prove (bound to the
    effect). At most one escalation is open per fact key. Status moves open → approved or
    open → rejected, once, by a reviewer who neither raised it nor acts for the principal
    that did.
    """

    escalation_id = models.CharField(max_length=40, unique=True)
    code = models.CharField(max_length=100)
    fact_key = models.CharField(max_length=200, blank=True, default="", db_index=True)
    snapshot = models.ForeignKey(
        "reconcile_app.DecisionSnapshot",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="escalations",
    )
    # A suggested memory awaiting promotion (code `promotion`).
    memory = models.ForeignKey(
        "reconcile_app.MemoryRecord",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="promotions",
    )
    effect = models.ForeignKey(
        "reconcile_app.Effect",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="escalations",
    )
    # A snapshot escalation's question (decision class, subject, proposed action and value,
    # reasons and contradictions: services/escalation_conflicts.py); retries of the same
    # reconcile that raise the same question join the open escalation instead of opening more.
    conflict_key = models.CharField(max_length=64, blank=True, default="", db_index=True)
    joined_snapshots = models.ManyToManyField(
        "reconcile_app.DecisionSnapshot", blank=True, related_name="joined_escalations"
    )
    candidate_refs = models.JSONField(default=list)
    owner = models.CharField(max_length=200, db_index=True)
    next_action = models.CharField(max_length=300)
    allowed_until_resolved = models.JSONField(default=list)
    write_allowed = models.BooleanField(default=False)
    detail = models.TextField(blank=True, default="")
    requested_by = models.ForeignKey(
        "reconcile_app.Principal",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="escalations_raised",
    )
    status = models.CharField(
        max_length=10,
        choices=EscalationStatus.choices,
        default=EscalationStatus.OPEN,
        db_index=True,
    )
    opened_at = models.DateTimeField(db_index=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    rationale = models.TextField(blank=True, default="")
    selected_ref = models.CharField(max_length=100, blank=True, default="")

    class Meta:
        ordering = ["-opened_at", "-id"]
        constraints = [
            # One open escalation per fact key, however many requests hit the ambiguity.
            models.UniqueConstraint(
                fields=["fact_key"],
                condition=Q(status="open") & ~Q(fact_key=""),
                name="one_open_escalation_per_fact_key",
            ),
            # One open escalation per question, however many retries raise it.
            models.UniqueConstraint(
                fields=["conflict_key"],
                condition=Q(status="open") & ~Q(conflict_key=""),
                name="one_open_escalation_per_conflict",
            ),
        ]

    def __str__(self) -> str:
        return self.escalation_id
