"""One memory record for the console: every field, its status history, what it derives from,
what it supersedes and what superseded it, its class's rules and quarantine, and the
promotion escalation that reviews it (for a suggestion)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Q

from reconcile_app.choices import PROMOTION, MemoryStatus, QuarantineScope
from reconcile_app.errors import NotFound
from reconcile_app.models import (
    Escalation,
    MemoryClass,
    MemoryRecord,
    MemoryStatusEvent,
    Quarantine,
)
from reconcile_app.selectors.memory_taint import Upstream, corrections_upstream
from reconcile_app.services.quarantine import in_force
from reconcile_app.services.references import split_reference


@dataclass(frozen=True)
class Derivation:
    """One entry of `derived_from`: as recorded, and the kind and id it names."""

    reference: str
    kind: str
    ref: str


@dataclass(frozen=True)
class MemoryDetail:
    record: MemoryRecord
    # None when the class is no longer declared (records keep the class name they were
    # written with).
    declared: MemoryClass | None
    class_quarantine: Quarantine | None
    # Quarantine of this one record (scope `memory`): its claims are never confirmed.
    memory_quarantine: Quarantine | None
    history: list[MemoryStatusEvent]
    superseded_by: list[MemoryRecord]
    promotion: Escalation | None
    # Corrections of evidence it derives from, however far up: a suggestion then cannot be
    # promoted (`memory_tainted`), and any record of it deserves a look.
    tainted_by: list[Upstream]

    @property
    def derivations(self) -> list[Derivation]:
        return [
            Derivation(reference, *split_reference(reference))
            for reference in self.record.derived_from
        ]

    @property
    def suggested(self) -> bool:
        return self.record.status == MemoryStatus.SUGGESTED

    @property
    def supersession_pending(self) -> bool:
        """A suggestion names what it would supersede; that stays in force until promotion."""
        return self.record.supersedes_id is not None and self.record.status in (
            MemoryStatus.SUGGESTED,
            MemoryStatus.REJECTED,
        )

    def written_by(self, user: Any) -> bool:
        """True when `user` wrote it (through their own token): never theirs to promote."""
        return self.record.agent.user_id == getattr(user, "pk", None)


def console_memory_detail(*, memory_id: str) -> MemoryDetail:
    """Nine queries, however long its history or how many records name it, or how far up
    its derivation goes."""
    record = (
        MemoryRecord.objects.select_related("agent", "supersedes")
        .filter(memory_id=memory_id)
        .first()
    )
    if record is None:
        raise NotFound(f"no memory {memory_id}", code="memory_not_found")
    quarantines = Quarantine.objects.filter(
        Q(scope=QuarantineScope.MEMORY_CLASS, target=record.memory_class)
        | Q(scope=QuarantineScope.MEMORY, target=record.memory_id),
        in_force(),
    ).order_by("created_at")
    earliest: dict[str, Quarantine] = {}
    for quarantine in quarantines:
        earliest.setdefault(quarantine.scope, quarantine)
    return MemoryDetail(
        record=record,
        declared=MemoryClass.objects.filter(name=record.memory_class).first(),
        class_quarantine=earliest.get(QuarantineScope.MEMORY_CLASS),
        memory_quarantine=earliest.get(QuarantineScope.MEMORY),
        # In the order the moves happened (fact_history.statuses_at says why not by stamp).
        history=list(MemoryStatusEvent.objects.filter(memory=record).order_by("id")),
        superseded_by=list(
            MemoryRecord.objects.filter(supersedes=record).order_by("recorded_at", "id")
        ),
        promotion=Escalation.objects.filter(memory=record, code=PROMOTION)
        .select_related("requested_by", "decided_by")
        .order_by("opened_at", "id")
        .first(),
        tainted_by=corrections_upstream(record),
    )
