"""The operator audit trail: who did what, when, why, with before and after."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from reconcile_app.models import AuditEvent


def audit_record(
    *,
    actor: Any,
    action: str,
    object_kind: str,
    object_ref: str,
    reason: str = "",
    request_id: str = "",
    before: Any = None,
    after: Any = None,
) -> AuditEvent:
    """Call inside the transaction of the change it describes, so both land or neither does."""
    return AuditEvent.objects.create(
        at=timezone.now(),
        actor=actor if getattr(actor, "pk", None) else None,
        actor_name=getattr(actor, "username", "") or "system",
        action=action,
        object_kind=object_kind,
        object_ref=object_ref,
        reason=reason,
        request_id=request_id,
        before=before,
        after=after,
    )
