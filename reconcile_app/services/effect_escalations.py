"""An operator hands an effect whose outcome nobody can prove to its owner: an escalation
bound to the effect (and its snapshot), which never approves the snapshot itself
(selectors/approvals.snapshot_approval)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from reconcile_app.choices import READ_HISTORY, EffectStatus, EscalationStatus
from reconcile_app.errors import Conflict, NotFound, ValidationFailed
from reconcile_app.limits import says_nothing
from reconcile_app.models import Effect, Escalation
from reconcile_app.services.audit import audit_record
from reconcile_app.services.escalations import new_escalation_id
from reconcile_app.services.principals import principal_for_user


def escalation_open_for_effect(
    *, idempotency_key: str, actor: Any, reason: str, request_id: str = ""
) -> Escalation:
    """An operator hands an unresolved effect to its owner (once; later calls return it)."""
    if says_nothing(reason):
        raise ValidationFailed("escalating needs a reason", code="reason_required")
    with transaction.atomic():
        # Locked: two operators escalating at once both found no open escalation and each
        # opened one; the second now waits, then finds the first. The status is read under
        # the same lock, so an outcome resolved meanwhile is not handed to its owner.
        effect = (
            Effect.objects.select_for_update(of=("self",))
            .select_related("source", "snapshot")
            .filter(idempotency_key=idempotency_key)
            .first()
        )
        if effect is None:
            raise NotFound(f"no effect {idempotency_key}", code="effect_not_found")
        if effect.status not in (EffectStatus.UNKNOWN, EffectStatus.POSTCONDITION_FAILED):
            raise Conflict(
                f"{idempotency_key} is {effect.status}: only unproven outcomes are escalated",
                code="not_escalatable",
            )
        existing = Escalation.objects.filter(effect=effect, status=EscalationStatus.OPEN).first()
        if existing is not None:
            return existing
        escalation = Escalation.objects.create(
            escalation_id=new_escalation_id(),
            code=f"effect_{effect.status}",
            effect=effect,
            snapshot=effect.snapshot,
            candidate_refs=[effect.idempotency_key],
            owner=effect.source.owner or settings.RECONCILE_FALLBACK_OWNER,
            next_action=f"confirm with {effect.source.name} whether {effect.action} happened",
            allowed_until_resolved=READ_HISTORY,
            write_allowed=False,
            detail=reason,
            requested_by=principal_for_user(actor),
            opened_at=timezone.now(),
        )
        audit_record(
            actor=actor,
            action="effect.escalate",
            object_kind="effect",
            object_ref=idempotency_key,
            reason=reason,
            request_id=request_id,
            after={"escalation_id": escalation.escalation_id},
        )
    return escalation
