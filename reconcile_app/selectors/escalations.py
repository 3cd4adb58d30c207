"""Reads of escalations, scoped to who asks (API.md "Who reads what").

People in a role read every escalation. An agent reads those bound to its own snapshots or
effects, those it raised, and those of the fact keys it has written: the ones whose outcome
it is waiting for. Any other is not there (404).
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from reconcile_app.errors import NotFound
from reconcile_app.models import Escalation, MemoryRecord
from reconcile_app.roles import is_staff_role


def escalations_visible_to(user: Any) -> QuerySet[Escalation]:
    escalations = Escalation.objects.select_related(
        "snapshot", "effect", "requested_by", "decided_by"
    )
    if is_staff_role(user):
        return escalations
    written_keys = (
        MemoryRecord.objects.filter(agent__user=user).exclude(fact_key="").values("fact_key")
    )
    return escalations.filter(
        Q(snapshot__principal__user=user)
        | Q(effect__principal__user=user)
        | Q(requested_by__user=user)
        | Q(fact_key__in=written_keys)
    )


def escalation_get(*, user: Any, escalation_id: str) -> Escalation:
    escalation = escalations_visible_to(user).filter(escalation_id=escalation_id).first()
    if escalation is None:
        raise NotFound(f"no escalation {escalation_id}", code="escalation_not_found")
    return escalation
