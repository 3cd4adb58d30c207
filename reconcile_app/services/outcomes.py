"""After the commit: readbacks, resolution of unknown outcomes, and operators' resolutions.

Nothing here re-sends a command. A readback reads the target; a resolution asks the owner's
effect ledger by idempotency key, then the target state; what neither proves stays `unknown`
for people to triage.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from reconcile_app.canonical import rfc3339, same_value
from reconcile_app.choices import EvidenceKind, ReadStatus
from reconcile_app.errors import Conflict, NotFound, ValidationFailed
from reconcile_app.models import Effect, EffectEvent, EffectStatus
from reconcile_app.services.audit import audit_record
from reconcile_app.services.effects import (
    READBACK_RECHECK_SECONDS,
    RESOLUTION_BACKOFF,
    effect_accept,
)
from reconcile_app.services.evidence import evidence_append
from reconcile_app.services.provenance import effect_evidence_lineage
from reconcile_app.sources import LookupOutcome, adapter_for

READBACK_STATUSES = (EffectStatus.ACCEPTED, EffectStatus.POSTCONDITION_FAILED)


class OwnerUnavailable(Exception):
    """The owner could not be read now; the caller retries later (with backoff)."""


def _locked(effect_id: int) -> Effect:
    return (
        Effect.objects.select_for_update(of=("self",))
        .select_related("source", "snapshot")
        .get(pk=effect_id)
    )


def _event(effect: Effect, kind: str, detail: dict[str, Any], **extra: Any) -> None:
    EffectEvent.objects.create(effect=effect, at=timezone.now(), kind=kind, detail=detail, **extra)


def _quarantined(source: str) -> bool:
    from reconcile_app.services.quarantine import quarantines_active

    return source in quarantines_active().sources


def effect_readback(*, effect_id: int) -> Effect:
    """accepted → verified | postcondition_failed, from an independent read of the target.

    A postcondition_failed effect may be read again (an operator's recheck): if the owner has
    caught up it becomes verified. Any other status is returned unchanged, so a redelivered
    task does nothing twice. Raises
    OwnerUnavailable when the target cannot be read, or was read from a replica that has not
    yet seen the commit, so the task retries instead of judging on stale data.
    """
    effect = Effect.objects.select_related("source", "snapshot").get(pk=effect_id)
    if effect.status not in READBACK_STATUSES:
        return effect
    if _quarantined(effect.source.name):
        # Held, not failed: the readback waits for the quarantine to be lifted.
        raise OwnerUnavailable(f"{effect.source.name} is quarantined; readback held")
    Effect.objects.filter(pk=effect.pk).update(readback_attempts=F("readback_attempts") + 1)
    read = adapter_for(effect.source).read(effect.subject, effect.field)  # no lock held
    if read.status != ReadStatus.OK:
        raise OwnerUnavailable(f"{effect.source.name}: {read.status} {read.detail}")
    if read.observed_at is not None and effect.outcome_at and read.observed_at < effect.outcome_at:
        raise OwnerUnavailable(
            f"{effect.source.name} answered from a view older than the commit "
            f"({rfc3339(read.observed_at)})"
        )
    reached = same_value(read.value, effect.resulting_value) and (
        read.version is not None
        and effect.resulting_version is not None
        and read.version >= effect.resulting_version
    )
    with transaction.atomic():
        effect = _locked(effect_id)
        if effect.status not in READBACK_STATUSES:
            return effect
        status = EffectStatus.VERIFIED if reached else EffectStatus.POSTCONDITION_FAILED
        entry = evidence_append(
            kind=EvidenceKind.READBACK,
            subject=effect.subject,
            field=effect.field,
            value={"value": read.value, "version": read.version, "verified": reached},
            source=effect.source.name,
            observed_at=read.observed_at or timezone.now(),
            derived_from=[effect.snapshot.snapshot_id],
            note=(
                f"readback of {effect.idempotency_key}: expected {effect.resulting_value!r} at "
                f"version ≥ {effect.resulting_version}, found {read.value!r} at {read.version}"
            ),
        )
        Effect.objects.filter(pk=effect.pk, status=effect.status).update(
            status=status, verified_at=timezone.now(), next_check_at=None
        )
        effect_evidence_lineage(
            idempotency_key=effect.idempotency_key, evidence_id=entry.evidence_id, what="readback"
        )
        _event(
            effect,
            "readback",
            {"value": read.value, "version": read.version, "result": status},
            evidence_id=entry.evidence_id,
        )
        effect.refresh_from_db()
    return effect


def effect_resolve_unknown(*, effect_id: int) -> Effect:
    """unknown → accepted | not_executed, or stays unknown (with the next check scheduled)."""
    effect = Effect.objects.select_related("source", "snapshot").get(pk=effect_id)
    if effect.status != EffectStatus.UNKNOWN:
        return effect
    attempt = effect.resolution_attempts + 1
    if _quarantined(effect.source.name):
        Effect.objects.filter(pk=effect.pk, status=EffectStatus.UNKNOWN).update(
            next_check_at=timezone.now() + timedelta(seconds=RESOLUTION_BACKOFF[-1])
        )
        return effect
    lookup = adapter_for(effect.source).lookup_effect(effect.idempotency_key)
    if lookup.outcome == LookupOutcome.FOUND:
        return effect_accept(effect_id=effect.pk, receipt=lookup.receipt or {}, via="resolution")
    target = adapter_for(effect.source).read(effect.subject, effect.field)
    untouched = target.status == ReadStatus.OK and target.version == effect.expected_version
    with transaction.atomic():
        effect = _locked(effect_id)
        if effect.status != EffectStatus.UNKNOWN:
            return effect
        if lookup.outcome == LookupOutcome.NOT_FOUND and untouched:
            # The owner's ledger never saw the key and the target is still at the version we
            # sent against: the command did not execute.
            entry = evidence_append(
                kind=EvidenceKind.OBSERVATION,
                subject=effect.subject,
                field=effect.field,
                value={"idempotency_key": effect.idempotency_key, "outcome": "not_executed"},
                source=effect.source.name,
                observed_at=target.observed_at or timezone.now(),
                derived_from=[effect.snapshot.snapshot_id],
                note="resolution: owner's ledger has no such key; target unchanged",
            )
            Effect.objects.filter(pk=effect.pk, status=EffectStatus.UNKNOWN).update(
                status=EffectStatus.NOT_EXECUTED,
                resolution_attempts=attempt,
                next_check_at=None,
                outcome={**effect.outcome, "resolution": "not_executed"},
            )
            _event(effect, "resolution", {"outcome": "not_executed"}, evidence_id=entry.evidence_id)
            effect_evidence_lineage(
                idempotency_key=effect.idempotency_key,
                evidence_id=entry.evidence_id,
                what="resolution: not executed",
            )
        else:
            delay = RESOLUTION_BACKOFF[min(attempt, len(RESOLUTION_BACKOFF) - 1)]
            why = {
                LookupOutcome.UNAVAILABLE: "owner's ledger unavailable",
                LookupOutcome.NOT_FOUND: "ledger has no key but the target changed since",
            }[lookup.outcome]
            Effect.objects.filter(pk=effect.pk, status=EffectStatus.UNKNOWN).update(
                resolution_attempts=attempt,
                next_check_at=timezone.now() + timedelta(seconds=delay),
            )
            _event(effect, "resolution_attempt", {"attempt": attempt, "unresolved": why})
        effect.refresh_from_db()
    return effect


RESOLVABLE = (EffectStatus.UNKNOWN, EffectStatus.POSTCONDITION_FAILED)


def effect_resolve_manually(
    *, idempotency_key: str, outcome: str, reason: str, actor: Any, request_id: str = ""
) -> Effect:
    """An operator's verdict on an unknown (or failed-postcondition) effect, as evidence."""
    if outcome not in ("succeeded", "not_executed"):
        raise ValidationFailed("outcome must be succeeded or not_executed", code="invalid_outcome")
    if not reason or not reason.strip():
        raise ValidationFailed("a manual resolution needs a reason", code="reason_required")
    with transaction.atomic():
        found = Effect.objects.filter(idempotency_key=idempotency_key).values_list("pk", flat=True)
        if not found:
            raise NotFound(f"no effect {idempotency_key}", code="effect_not_found")
        effect = _locked(found[0])
        if effect.status not in RESOLVABLE:
            raise Conflict(
                f"{idempotency_key} is {effect.status}; only unknown or postcondition_failed "
                "effects are resolved by hand",
                code="not_resolvable",
            )
        before = effect.status
        # "Succeeded" is a person's word, not proof: the effect becomes `accepted` (API.md:
        # unknown → accepted) and a readback checks the target like any other.
        new_status = EffectStatus.ACCEPTED if outcome == "succeeded" else EffectStatus.NOT_EXECUTED
        entry = evidence_append(
            kind=EvidenceKind.OBSERVATION,
            subject=effect.subject,
            field=effect.field,
            value={"idempotency_key": idempotency_key, "outcome": outcome},
            source=f"operator:{getattr(actor, 'username', 'unknown')}",
            observed_at=timezone.now(),
            derived_from=[effect.snapshot.snapshot_id],
            note=f"manual resolution: {reason}",
        )
        accepted = new_status == EffectStatus.ACCEPTED
        now = timezone.now()
        Effect.objects.filter(pk=effect.pk, status=before).update(
            status=new_status,
            outcome={**effect.outcome, "resolution": outcome, "reason": reason},
            outcome_at=now,
            # Without a receipt, the least version the command could have produced.
            resulting_version=effect.resulting_version or effect.expected_version + 1,
            next_check_at=now + timedelta(seconds=READBACK_RECHECK_SECONDS) if accepted else None,
        )
        if accepted:
            from reconcile_app.tasks import effect_readback as readback_task

            transaction.on_commit(lambda: readback_task.delay(effect.pk))
        effect_evidence_lineage(
            idempotency_key=idempotency_key,
            evidence_id=entry.evidence_id,
            what=f"manual resolution: {outcome}",
        )
        _event(
            effect,
            "manual_resolution",
            {"outcome": outcome, "reason": reason},
            evidence_id=entry.evidence_id,
            actor=getattr(actor, "username", ""),
        )
        audit_record(
            actor=actor,
            action="effect.resolve",
            object_kind="effect",
            object_ref=idempotency_key,
            reason=reason,
            request_id=request_id,
            before={"status": before},
            after={"status": new_status, "outcome": outcome},
        )
        effect.refresh_from_db()
    return effect


def effect_request_check(*, idempotency_key: str, actor: Any, request_id: str = "") -> Effect:
    """Queue a readback (accepted / postcondition_failed) or a resolution (unknown) now."""
    from reconcile_app.tasks import effect_readback, effect_resolve

    effect = Effect.objects.filter(idempotency_key=idempotency_key).first()
    if effect is None:
        raise NotFound(f"no effect {idempotency_key}", code="effect_not_found")
    if effect.status in READBACK_STATUSES:
        task = effect_readback
    elif effect.status == EffectStatus.UNKNOWN:
        task = effect_resolve
    else:
        raise Conflict(
            f"{idempotency_key} is {effect.status}: there is nothing to read back or resolve",
            code="nothing_to_check",
        )
    with transaction.atomic():
        _event(effect, "check_requested", {"task": task.name}, actor=getattr(actor, "username", ""))
        audit_record(
            actor=actor,
            action="effect.readback",
            object_kind="effect",
            object_ref=idempotency_key,
            request_id=request_id,
            before={"status": effect.status},
        )
        transaction.on_commit(lambda: task.delay(effect.pk))
    return effect


def effects_sweep(
    *, now: Any = None, grace_seconds: int = READBACK_RECHECK_SECONDS
) -> dict[str, int]:
    """Re-enqueue work whose task may have been lost (broker restarts, killed workers).

    Accepted effects and unknown outcomes carry `next_check_at`; when it passes, the sweep
    enqueues the readback or resolution again (both are idempotent) and pushes the next check
    back, so a long owner outage does not flood the queue. A `sent` effect older than the
    grace period lost its sender mid-request, so its outcome is unknown.
    """
    from reconcile_app.tasks import effect_readback, effect_resolve

    now = now or timezone.now()
    cutoff = now - timedelta(seconds=grace_seconds)
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
                EffectEvent.objects.create(
                    effect_id=effect_id, at=now, kind="timeout", detail={"code": "sender_lost"}
                )
    due = Effect.objects.filter(
        status__in=[EffectStatus.ACCEPTED, EffectStatus.UNKNOWN], next_check_at__lte=now
    ).values_list("pk", "status", "readback_attempts")
    counts = {"sent_to_unknown": len(stuck_sent), "readbacks": 0, "resolutions": 0}
    for effect_id, status, attempts in list(due):
        if status == EffectStatus.ACCEPTED:
            backoff = min(grace_seconds * 2 ** min(attempts, 6), 3600)
            Effect.objects.filter(pk=effect_id, status=status).update(
                next_check_at=now + timedelta(seconds=backoff)
            )
            effect_readback.delay(effect_id)
            counts["readbacks"] += 1
        else:
            # effect_resolve_unknown schedules its own next check.
            effect_resolve.delay(effect_id)
            counts["resolutions"] += 1
    return counts
