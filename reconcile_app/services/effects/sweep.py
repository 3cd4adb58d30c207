"""The sweep: re-enqueue effect work whose Celery task may have been lost."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from reconcile_app.choices import EffectStatus
from reconcile_app.models import Effect, EffectEvent
from reconcile_app.services.effects.state import (
    READBACK_RECHECK_SECONDS,
    request_unanswered_entry,
)


def effects_sweep(
    *, now: Any = None, grace_seconds: int = READBACK_RECHECK_SECONDS
) -> dict[str, int]:
    """Re-enqueue work whose task may have been lost (broker restarts, killed workers).

    Accepted effects and unknown outcomes carry `next_check_at`; when it passes, the sweep
    enqueues the readback or resolution again (both are idempotent) and pushes the next check
    back, so a long owner outage does not flood the queue. A `sent` effect older than the
    grace period lost its sender mid-request, so its outcome is unknown. A `recorded` one that
    old never left: its request ended between the record and the send (the database refused
    the next write, a disk full say, or the process died), so it is `rejected` `not_sent`, and
    a retry with its key sends it, through the gate again (services/effects/commit.py).
    """
    from reconcile_app.tasks import effect_readback_task, effect_resolve_task

    now = now or timezone.now()
    cutoff = now - timedelta(seconds=grace_seconds)
    never_sent = _recorded_never_sent(now, cutoff)
    stuck_sent = list(
        Effect.objects.filter(status=EffectStatus.SENT, sent_at__lt=cutoff).values_list(
            "pk", flat=True
        )
    )
    for effect_id in stuck_sent:
        with transaction.atomic():
            moved = Effect.objects.filter(pk=effect_id, status=EffectStatus.SENT).update(
                status=EffectStatus.UNKNOWN,
                outcome={"code": "sender_lost", "detail": "no answer was recorded"},
                outcome_at=now,
                next_check_at=now,
            )
            if moved:
                effect = Effect.objects.select_related("source", "snapshot").get(pk=effect_id)
                entry = request_unanswered_entry(
                    effect, note="request sent; response not received (its sender was lost)"
                )
                EffectEvent.objects.create(
                    effect_id=effect_id,
                    at=now,
                    kind="timeout",
                    detail={"code": "sender_lost"},
                    evidence_id=entry.evidence_id,
                )
    due = Effect.objects.filter(
        status__in=[EffectStatus.ACCEPTED, EffectStatus.UNKNOWN], next_check_at__lte=now
    ).values_list("pk", "status", "readback_attempts", "resolution_attempts")
    counts = {
        "recorded_to_not_sent": never_sent,
        "sent_to_unknown": len(stuck_sent),
        "readbacks": 0,
        "resolutions": 0,
    }
    for effect_id, status, readbacks, resolutions in list(due):
        readback = status == EffectStatus.ACCEPTED
        # A resolution schedules its own next check when it ends; this one holds when it never
        # does (its task lost, or cut short at its time limit), so a stuck resolution is not
        # queued again on every sweep.
        attempts = readbacks if readback else resolutions
        backoff = min(grace_seconds * 2 ** min(attempts, 6), 3600)
        Effect.objects.filter(pk=effect_id, status=status).update(
            next_check_at=now + timedelta(seconds=backoff)
        )
        if readback:
            effect_readback_task.delay(effect_id)
            counts["readbacks"] += 1
        else:
            effect_resolve_task.delay(effect_id)
            counts["resolutions"] += 1
    return counts


NOT_SENT = {
    "code": "not_sent",
    "detail": "recorded, never sent: the request that recorded it ended before the command "
    "left; retry with the same Idempotency-Key",
}


def _recorded_never_sent(now: Any, cutoff: Any) -> int:
    """recorded → rejected `not_sent` for effects recorded before `cutoff`; how many moved.
    The command is marked sent before it leaves (a conditional UPDATE on `recorded`), so one
    that is still `recorded` here was never sent, and its sender, should it wake, sends
    nothing (effect_mark_sent moves nothing)."""
    stuck = list(
        Effect.objects.filter(status=EffectStatus.RECORDED, created_at__lt=cutoff).values_list(
            "pk", flat=True
        )
    )
    moved_count = 0
    for effect_id in stuck:
        with transaction.atomic():
            moved = Effect.objects.filter(pk=effect_id, status=EffectStatus.RECORDED).update(
                status=EffectStatus.REJECTED, outcome=NOT_SENT, outcome_at=now
            )
            if moved:
                EffectEvent.objects.create(
                    effect_id=effect_id, at=now, kind="rejected", detail={"code": "not_sent"}
                )
                moved_count += 1
    return moved_count
