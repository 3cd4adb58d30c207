"""Promotion: a suggested memory becomes `active` only when a reviewer other than its writer
approves it (seed 000: "a policy-like memory needs an approved owner or remains a
suggestion"). The question is an escalation routed to the class's owner."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils import timezone

from reconcile_app.choices import MEMORY_IN_FORCE, PROMOTION, READ_HISTORY, MemoryStatus
from reconcile_app.errors import Conflict
from reconcile_app.models import Escalation, MemoryRecord, Principal
from reconcile_app.selectors.memory_taint import corrections_upstream
from reconcile_app.services.audit import audit_record
from reconcile_app.services.evidence import ledger_held
from reconcile_app.services.memory_status import memory_status_move
from reconcile_app.services.quarantine import memory_class_check, memory_quarantine_check


def promotion_open(*, memory: MemoryRecord, owner: str, requested_by: Principal) -> Escalation:
    """Inside the memory's own transaction: the suggestion and its question land together."""
    return Escalation.objects.create(
        escalation_id=f"esc_{memory.memory_id[-8:]}_{timezone.now().strftime('%H%M%S%f')}"[:40],
        code=PROMOTION,
        memory=memory,
        candidate_refs=[memory.memory_id],
        owner=owner or settings.RECONCILE_FALLBACK_OWNER,
        next_action=f"review the suggested {memory.memory_class} memory and promote or reject it",
        allowed_until_resolved=READ_HISTORY,
        write_allowed=False,
        detail=f"{memory.subject}.{memory.field or memory.fact_key} = {memory.value!r}",
        requested_by=requested_by,
        opened_at=memory.recorded_at,
    )


def _grounds_check(memory: MemoryRecord) -> None:
    """Refuse to bring into force a belief whose evidence was corrected, since it was
    suggested or before (as a commit on a tainted snapshot is refused). Under the ledger's
    head, held FOR SHARE after the rows (the lock order): a correction appends under it, so it
    either committed before and is seen here, or waits for this decision."""
    ledger_held()
    upstream = corrections_upstream(memory)
    if upstream:
        named = ", ".join(f"{item.correction_id} ({item.evidence_id})" for item in upstream)
        raise Conflict(
            # Corrected before or after the suggestion was written: either way its grounds
            # are withdrawn (a suggestion may be written from an entry already corrected).
            f"{memory.memory_id} derives from corrected evidence: {named}. Reject it; its "
            "writer suggests again from what holds now.",
            code="memory_tainted",
            tainted_by=[item.correction_id for item in upstream],
        )


def promotion_settle(
    *,
    escalation: Escalation,
    approve: bool,
    reviewer: Any,
    rationale: str,
    request_id: str = "",
    at: datetime | None = None,
) -> dict[str, object]:
    """suggested → active (and what it supersedes → superseded) or → rejected.

    Inside the decision's transaction (services.escalations.escalation_decide, which checks
    the reviewer and audits the escalation): the memory's own audit row says who moved it and
    why, so its page's timeline tells the story without the escalation's.
    """
    memory = MemoryRecord.objects.select_for_update().get(promotions=escalation)
    if approve:
        # A quarantined class admits nothing new: no write, and no promotion into force; nor
        # does a record an operator quarantined on its own (a poisoned suggestion).
        memory_class_check(memory.memory_class)
        memory_quarantine_check(memory.memory_id)
    if approve and memory.supersedes_id is not None:
        replaced = MemoryRecord.objects.select_for_update().get(pk=memory.supersedes_id)
        if replaced.status == MemoryStatus.SUPERSEDED:
            # Another promotion (or a write) replaced it first: approving this one would make
            # a second successor of one record. (One that merely expired or was retired
            # otherwise has no successor: the promotion goes ahead and retires nothing.)
            raise Conflict(
                f"{memory.memory_id} would supersede {replaced.memory_id}, which another "
                "memory superseded first. Reject it; its writer suggests again against what "
                "is in force.",
                code="supersession_conflict",
                superseded=replaced.memory_id,
            )
    if approve:
        _grounds_check(memory)  # last: the ledger's head after every row (the lock order)
    decision = f"{'promoted' if approve else 'rejected'} by escalation {escalation.escalation_id}"
    to = MemoryStatus.ACTIVE if approve else MemoryStatus.REJECTED
    moved = memory_status_move(
        memory_ids=[memory.pk],
        source_statuses=[MemoryStatus.SUGGESTED],
        to=to,
        cause=decision,
        at=at,
    )
    superseded: list[str] = []
    previous = memory.supersedes if moved and approve else None
    # What it would supersede stayed in force while it was a suggestion; only now it goes.
    if previous is not None and memory_status_move(
        memory_ids=[previous.pk],
        source_statuses=MEMORY_IN_FORCE,
        to=MemoryStatus.SUPERSEDED,
        cause=f"superseded by {memory.memory_id} ({decision})",
        at=at,
    ):
        superseded.append(previous.memory_id)
    if moved:
        audit_record(
            actor=reviewer,
            action="memory.promote" if approve else "memory.reject",
            object_kind="memory",
            object_ref=memory.memory_id,
            reason=rationale,
            request_id=request_id,
            before={"status": MemoryStatus.SUGGESTED.value},
            after={
                "status": to.value,
                "escalation_id": escalation.escalation_id,
                "superseded": superseded,
            },
        )
    return {"memory": memory.memory_id, "moved": bool(moved), "superseded": superseded}
