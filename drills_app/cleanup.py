"""A drill leaves the operators' queues as it found them.

The drill runs its trials through the real services, as the drill agent, in its own sources
and subjects: its `escalate` decisions open escalations and its contradicted claims open
contradictions, in the same queues (and the same "open" gauges) that operations triage. Those
are the drill's questions, nobody's to answer, and a drill run every day would bury the real
ones. So once its trials are measured, the drill closes what its agent left open on the
run's own subjects (`drill-{tag}-…`, or every attempt's of a stored run): escalations
rejected, contradictions resolved and the quarantines of its agent's memories lifted (a
trial lifts its own; one whose worker died cannot), each with a note naming the run and the
person who started it. They are recorded as the
system's doing, not that person's: starting a drill takes an operator, deciding an
escalation a reviewer. The rows stay, with their history, for anyone who wants to see what
the drill did.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from reconcile_app.choices import ContradictionStatus, EscalationStatus, QuarantineScope
from reconcile_app.errors import Conflict
from reconcile_app.models import Contradiction, Escalation, MemoryRecord, Principal, Quarantine
from reconcile_app.services.audit import audit_record
from reconcile_app.services.contradictions import contradiction_resolve
from reconcile_app.services.quarantine import ACTIVE, quarantine_lift


@dataclass(frozen=True)
class Closed:
    escalations: int
    contradictions: int
    quarantines: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "escalations": self.escalations,
            "contradictions": self.contradictions,
            "quarantines": self.quarantines,
        }


def drill_rows_close(*, principal: Principal, subjects: str, note: str) -> Closed:
    """Reject the drill agent's open decision escalations on subjects starting `subjects`,
    resolve the open contradictions its snapshots saw there and lift the quarantines held on
    its memories there, in one transaction, each audited as `system` with `note`."""
    now = timezone.now()
    with transaction.atomic():
        # The quarantines first: lifting one moves the quarantine epoch, and every write
        # under the epochs takes them before its rows (a reviewer's decision of one of these
        # escalations among them). Lifted after the escalations were locked, the two waited
        # on each other and PostgreSQL failed one.
        held = Quarantine.objects.filter(
            scope=QuarantineScope.MEMORY,
            status__in=ACTIVE,
            target__in=MemoryRecord.objects.filter(
                agent=principal, subject__startswith=subjects
            ).values("memory_id"),
        ).values_list("quarantine_id", flat=True)
        lifted = 0
        for quarantine_id in list(held):
            try:
                quarantine_lift(quarantine_id=quarantine_id, reason=note, actor=None)
            except Conflict:
                continue  # someone lifted it meanwhile
            lifted += 1
        escalations = list(
            Escalation.objects.select_for_update(of=("self",))
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
        Escalation.objects.filter(pk__in=[row.pk for row in escalations]).update(
            status=EscalationStatus.REJECTED, decided_at=now, decided_by=None, rationale=note
        )
        for escalation in escalations:
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
            Contradiction.objects.filter(
                status=ContradictionStatus.OPEN,
                snapshot__principal=principal,
                subject__startswith=subjects,
            )
            .order_by("id")
            .values_list("pk", flat=True)
        )
        closed = 0
        for contradiction_id in contradictions:
            # The operators' own service: locked, conditional on still open, audited.
            try:
                contradiction_resolve(contradiction_id=contradiction_id, actor=None, note=note)
            except Conflict:
                continue  # someone resolved it meanwhile
            closed += 1
    return Closed(escalations=len(escalations), contradictions=closed, quarantines=lifted)
