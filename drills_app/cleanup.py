"""A drill leaves the operators' queues as it found them.

The drill runs its trials through the real services, as the drill agent, in its own sources
and subjects: its `escalate` decisions open escalations and its contradicted claims open
contradictions, in the same queues (and the same "open" gauges) that operations triage. Those
are the drill's questions, nobody's to answer, and a drill run every day would bury the real
ones. So once its trials are measured, the drill closes what its agent left open on the
run's own subjects (`drill-{tag}-…`): escalations rejected and contradictions resolved, each
with a note naming the run and the person who started it. They are recorded as the
system's doing, not that person's: starting a drill takes an operator, deciding an
escalation a reviewer. The rows stay, with their history, for anyone who wants to see what
the drill did.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from reconcile_app.choices import ContradictionStatus, EscalationStatus
from reconcile_app.models import Contradiction, Escalation, Principal
from reconcile_app.services.audit import audit_record


@dataclass(frozen=True)
class Closed:
    escalations: int
    contradictions: int

    def as_dict(self) -> dict[str, int]:
        return {"escalations": self.escalations, "contradictions": self.contradictions}


def drill_rows_close(*, principal: Principal, subjects: str, note: str) -> Closed:
    """Reject the drill agent's open decision escalations on subjects starting `subjects`
    and resolve the open contradictions its snapshots saw there, in one transaction, each
    audited as `system` with `note`."""
    now = timezone.now()
    with transaction.atomic():
        escalations = list(
            Escalation.objects.select_for_update()
            # A decision's question only: a promotion's, a fact key's or an effect's would
            # need its own settling (services/escalations.escalation_decide), and the drill
            # opens none.
            .filter(
                status=EscalationStatus.OPEN,
                requested_by=principal,
                snapshot__subject__startswith=subjects,
                memory__isnull=True,
                effect__isnull=True,
                fact_key="",
            )
            .order_by("id")
        )
        for escalation in escalations:
            escalation.status = EscalationStatus.REJECTED
            escalation.decided_at = now
            escalation.decided_by = None
            escalation.rationale = note
            escalation.save(update_fields=["status", "decided_at", "decided_by", "rationale"])
            audit_record(
                actor=None,
                action="escalation.reject",
                object_kind="escalation",
                object_ref=escalation.escalation_id,
                reason=note,
                before={"status": EscalationStatus.OPEN},
                after={"status": EscalationStatus.REJECTED},
            )
        contradictions = list(
            Contradiction.objects.select_for_update(of=("self",))
            .filter(
                status=ContradictionStatus.OPEN,
                snapshot__principal=principal,
                subject__startswith=subjects,
            )
            .order_by("id")
        )
        for contradiction in contradictions:
            Contradiction.objects.filter(pk=contradiction.pk).update(
                status=ContradictionStatus.RESOLVED,
                resolved_at=now,
                resolved_by=None,
                resolution_note=note,
            )
            audit_record(
                actor=None,
                action="contradiction.resolve",
                object_kind="contradiction",
                object_ref=str(contradiction.pk),
                reason=note,
                before={"status": ContradictionStatus.OPEN},
                after={"status": ContradictionStatus.RESOLVED},
            )
    return Closed(escalations=len(escalations), contradictions=len(contradictions))
