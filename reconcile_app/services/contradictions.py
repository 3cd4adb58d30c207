from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from reconcile_app.choices import ContradictionStatus
from reconcile_app.errors import Conflict, NotFound, ValidationFailed
from reconcile_app.limits import says_nothing
from reconcile_app.models import Contradiction
from reconcile_app.services.audit import audit_record


def contradiction_resolve(
    *, contradiction_id: int, actor: Any, note: str, request_id: str = ""
) -> Contradiction:
    """Close an open contradiction with the operator's note. Both values stay as they were."""
    if says_nothing(note):
        raise ValidationFailed("a resolution needs a note", code="note_required")
    with transaction.atomic():
        row = Contradiction.objects.select_for_update().filter(pk=contradiction_id).first()
        if row is None:
            raise NotFound(f"no contradiction {contradiction_id}", code="contradiction_not_found")
        # Conditional UPDATE: of two operators resolving at once, exactly one succeeds.
        now = timezone.now()
        updated = Contradiction.objects.filter(pk=row.pk, status=ContradictionStatus.OPEN).update(
            status=ContradictionStatus.RESOLVED,
            resolved_at=now,
            resolved_by=actor,
            resolution_note=note,
        )
        if not updated:
            raise Conflict(
                f"contradiction {contradiction_id} is already resolved", code="already_resolved"
            )
        audit_record(
            actor=actor,
            action="contradiction.resolve",
            object_kind="contradiction",
            object_ref=str(row.pk),
            reason=note,
            request_id=request_id,
            before={"status": ContradictionStatus.OPEN},
            after={"status": ContradictionStatus.RESOLVED},
        )
        row.refresh_from_db()
    return row
