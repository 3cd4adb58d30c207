"""A memory's status moves only here: a conditional UPDATE, and the event that remembers it.

Call inside the transaction of the change that causes the move, so the record, its history
and the cause land together or not at all.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.utils import timezone

from reconcile_app.models import MemoryRecord, MemoryStatusEvent


def memory_status_begin(*, memory: MemoryRecord, cause: str) -> None:
    """The first status of a new record, as of its recording."""
    MemoryStatusEvent.objects.create(
        memory=memory, status=memory.status, at=memory.recorded_at, cause=cause
    )


def memory_status_move(
    *,
    memory_ids: Iterable[int],
    source_statuses: Iterable[str],
    to: str,
    cause: str,
    at: datetime | None = None,
) -> list[int]:
    """Move the records among `memory_ids` that are in one of `source_statuses` to `to`.

    Returns the ids that moved. The rows are locked first (PostgreSQL; SQLite's IMMEDIATE
    transactions serialise writers), so two concurrent moves cannot both record an event for
    the same record, and a rerun moves nothing twice.
    """
    at = at or timezone.now()
    sources = list(source_statuses)
    moved = list(
        MemoryRecord.objects.select_for_update()
        .filter(pk__in=list(memory_ids), status__in=sources)
        .values_list("pk", flat=True)
    )
    if not moved:
        return []
    MemoryRecord.objects.filter(pk__in=moved, status__in=sources).update(status=to)
    MemoryStatusEvent.objects.bulk_create(
        MemoryStatusEvent(memory_id=pk, status=to, at=at, cause=cause[:300]) for pk in moved
    )
    return moved
