"""Promotion: a suggested memory becomes `active` only when a reviewer other than its writer
approves it (seed 000: "a policy-like memory needs an approved owner or remains a
suggestion"). The question is an escalation routed to the class's owner."""

from __future__ import annotations

from django.conf import settings
from django.utils import timezone

from reconcile_app.choices import MEMORY_IN_FORCE, EscalationStatus, MemoryStatus
from reconcile_app.models import Escalation, MemoryRecord, Principal
from reconcile_app.services.memory_status import memory_status_move

PROMOTION = "promotion"
READ_HISTORY = ["read_history"]


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


def promotion_settle(*, escalation: Escalation, approve: bool) -> dict[str, object]:
    """suggested → active (and what it supersedes → superseded) or → rejected."""
    memory = MemoryRecord.objects.select_for_update().get(promotions=escalation)
    decision = f"{'promoted' if approve else 'rejected'} by escalation {escalation.escalation_id}"
    moved = memory_status_move(
        memory_ids=[memory.pk],
        source_statuses=[MemoryStatus.SUGGESTED],
        to=MemoryStatus.ACTIVE if approve else MemoryStatus.REJECTED,
        cause=decision,
    )
    superseded: list[int] = []
    if moved and approve and memory.supersedes_id is not None:
        superseded = memory_status_move(
            memory_ids=[memory.supersedes_id],
            source_statuses=MEMORY_IN_FORCE,
            to=MemoryStatus.SUPERSEDED,
            cause=f"superseded by {memory.memory_id} ({decision})",
        )
    return {"memory": memory.memory_id, "moved": bool(moved), "superseded": superseded}


def promotions_open() -> list[Escalation]:
    return list(
        Escalation.objects.filter(code=PROMOTION, status=EscalationStatus.OPEN).select_related(
            "memory", "requested_by"
        )
    )
