"""Which escalation decides an `escalate` snapshot, and what its approval authorises."""

from __future__ import annotations

from datetime import datetime, timedelta

from reconcile_app.choices import DecisionResult, EscalationStatus
from reconcile_app.models import DecisionSnapshot, Escalation


def snapshot_approval(snapshot: DecisionSnapshot) -> Escalation | None:
    """The escalation the snapshot opened, or the open one its retry joined.

    An operator's escalation of an effect also names the effect's snapshot, and a promotion
    names a memory: those are other questions, never an approval of the snapshot. Uses the
    prefetched relations when the caller prefetched them (selectors/snapshots.py does).
    """
    for escalation in [*snapshot.escalations.all(), *snapshot.joined_escalations.all()]:
        if escalation.effect_id is None and escalation.memory_id is None:
            return escalation
    return None


def approved_window_start(snapshot: DecisionSnapshot) -> datetime | None:
    """When an approved `escalate` snapshot's commit window opened (None: it authorises
    nothing)."""
    if snapshot.content["decision"]["result"] != DecisionResult.ESCALATE:
        return None
    escalation = snapshot_approval(snapshot)
    if escalation is None or escalation.status != EscalationStatus.APPROVED:
        return None
    return escalation.decided_at


def commit_deadline(snapshot: DecisionSnapshot, opened_at: datetime) -> datetime:
    return opened_at + timedelta(seconds=snapshot.contract.commit_window_seconds)


def escalation_approver(escalation: Escalation) -> str:
    return escalation.decided_by.username if escalation.decided_by is not None else ""
