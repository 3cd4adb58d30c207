"""Reads of the evidence ledger and of memories, scoped to who asks (API.md "Who reads what").

People in a role read everything; an agent reads the evidence it attested and its own
memories. Another principal's entry is simply not there (404), so ids cannot be probed.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from reconcile_app.errors import NotFound
from reconcile_app.models import EvidenceEntry, MemoryRecord
from reconcile_app.roles import is_staff_role


def evidence_visible_to(user: Any) -> QuerySet[EvidenceEntry]:
    entries = EvidenceEntry.objects.select_related("revokes", "supersedes", "recorded_by")
    if is_staff_role(user):
        return entries
    return entries.filter(recorded_by__user=user)


def evidence_get(*, user: Any, evidence_id: str) -> EvidenceEntry:
    entry = evidence_visible_to(user).filter(evidence_id=evidence_id).first()
    if entry is None:
        raise NotFound(f"no evidence {evidence_id}", code="evidence_not_found")
    return entry


def memories_visible_to(user: Any) -> QuerySet[MemoryRecord]:
    memories = MemoryRecord.objects.select_related("agent", "supersedes")
    if is_staff_role(user):
        return memories
    return memories.filter(agent__user=user)


def memory_get(*, user: Any, memory_id: str) -> MemoryRecord:
    record = memories_visible_to(user).filter(memory_id=memory_id).first()
    if record is None:
        raise NotFound(f"no memory {memory_id}", code="memory_not_found")
    return record
