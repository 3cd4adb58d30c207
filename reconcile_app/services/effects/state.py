"""The effect state machine's shared parts: its constants, the one lock, the one timeline
writer, and the transition every path into `accepted` takes.

States (docs/api.md): recorded → sent → accepted | rejected | unknown; accepted → verified |
postcondition_failed; unknown → accepted | not_executed (or stays unknown); rejected →
recorded only for a rejection whose request never reached the owner (`owner_unavailable`),
when the same key is sent again; recorded → rejected (`not_sent`, by the sweep) for an effect whose
request ended before the command left. Every transition is a conditional UPDATE on the status it
leaves, under `effect_locked`, so two workers can never both move one effect.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db import connection, models, transaction
from django.utils import timezone

from reconcile_app.choices import EffectStatus, EvidenceKind
from reconcile_app.errors import DomainError
from reconcile_app.models import Effect, EffectEvent
from reconcile_app.services.enqueue import enqueue_on_commit
from reconcile_app.services.evidence import evidence_append

# Seconds before the sweep re-enqueues a readback that has not concluded.
READBACK_RECHECK_SECONDS = 60
# Seconds to wait before each automatic resolution attempt of an unknown outcome.
RESOLUTION_BACKOFF = (1, 5, 30, 120, 600, 1800)
# What a readback may judge (a failed postcondition may be read again when rechecked).
READBACK_STATUSES = (EffectStatus.ACCEPTED, EffectStatus.POSTCONDITION_FAILED)
# What an operator may resolve by hand.
RESOLVABLE = (EffectStatus.UNKNOWN, EffectStatus.POSTCONDITION_FAILED)
# Rejections whose request never reached the owner: nothing executed, so a retry with the
# same key is sent again rather than answered from the record.
# `not_sent`: recorded, but its request ended before the command left (the sweep says so).
RETRYABLE_REJECTIONS = frozenset({"owner_unavailable", "not_sent"})


def never_reached_owner(effect: Effect) -> bool:
    """Rejected without the owner having seen the command: its key sends it again (commit),
    and the console does not call the rejection the owner's refusal (effect_tags)."""
    return (
        effect.status == EffectStatus.REJECTED
        and (effect.outcome or {}).get("code") in RETRYABLE_REJECTIONS
    )


# `Retry-After` hints, in seconds. An owner that refused the connection is given a few
# seconds (the first resolution backoff after the immediate one); a request in flight with
# the same key ends within the owner's timeout, so its retry is asked to come back soon.
OWNER_RETRY_AFTER_SECONDS = RESOLUTION_BACKOFF[1]
IN_FLIGHT_RETRY_AFTER_SECONDS = 2


# Everything the effect's representation names.
REPRESENTED = ("source", "snapshot", "decision", "principal", "escalation")


def effect_locked(effect_id: int, *, known: Effect | None = None) -> Effect:
    """The effect row, locked for the rest of the transaction (PostgreSQL; SQLite's
    IMMEDIATE transactions serialise writers anyway), with the rows its representation names
    joined (not locked: `of` is the effect alone) rather than read one by one after the
    transaction. `known`: the caller's copy of the effect, whose related rows are kept rather
    than joined again (compiling five joins cost more CPU than the rest of the lock)."""
    held = _related_loaded(known) if known is not None else {}
    held_names = {field.name for field, related in held.items() if related is not None}
    joined = [name for name in REPRESENTED if name not in held_names]
    locking = Effect.objects.select_for_update(of=("self",))
    # Not `select_related()` with no names: that would follow every foreign key.
    effect = (locking.select_related(*joined) if joined else locking).get(pk=effect_id)
    _related_keep(effect, held)
    return effect


def effect_reload(effect: Effect) -> None:
    """`refresh_from_db`, keeping the related rows already loaded whose keys did not change
    (a refresh forgets every one of them, and representing the effect would read each
    again)."""
    loaded = _related_loaded(effect)
    effect.refresh_from_db()
    _related_keep(effect, loaded)


def _related_loaded(effect: Effect) -> dict[models.ForeignKey[Any, Any], models.Model | None]:
    return {
        field: field.get_cached_value(effect)
        for field in Effect._meta.concrete_fields
        if isinstance(field, models.ForeignKey) and field.is_cached(effect)
    }


def _related_keep(
    effect: Effect, loaded: dict[models.ForeignKey[Any, Any], models.Model | None]
) -> None:
    for field, related in loaded.items():
        if related is not None and getattr(effect, field.attname) == related.pk:
            field.set_cached_value(effect, related)


def effect_event(
    effect: Effect, kind: str, detail: dict[str, Any] | None = None, **extra: Any
) -> None:
    """One step of the effect's timeline (insert only)."""
    EffectEvent.objects.create(
        effect=effect, at=timezone.now(), kind=kind, detail=detail or {}, **extra
    )


# recorded → sent and its event as one statement on PostgreSQL (a data-modifying CTE runs
# once, read or not): no BEGIN and COMMIT around two statements on every commit's path.
# The event is inserted only when the effect moved: `rowcount` then says whether it did.
_MARK_SENT = (
    f"WITH moved AS (UPDATE {Effect._meta.db_table} SET status = %s, sent_at = %s "  # noqa: S608  # nosec B608 - the models' own table names
    "WHERE id = %s AND status = %s RETURNING id) "
    f"INSERT INTO {EffectEvent._meta.db_table} (effect_id, at, kind, detail, evidence_id, actor) "
    "SELECT id, %s, %s, %s::jsonb, '', '' FROM moved"
)


def effect_mark_sent(effect: Effect) -> bool:
    """recorded → sent, just before the command leaves for the owner. False when the effect
    was no longer `recorded` (the sweep settled it `not_sent` meanwhile, or a retry took it):
    then this caller must not send it."""
    now = timezone.now()
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            update: list[Any] = [EffectStatus.SENT, now, effect.pk, EffectStatus.RECORDED]
            cursor.execute(_MARK_SENT, [*update, now, "sent", "{}"])
            return cursor.rowcount == 1
    with transaction.atomic():
        moved = Effect.objects.filter(pk=effect.pk, status=EffectStatus.RECORDED).update(
            status=EffectStatus.SENT, sent_at=now
        )
        if moved:
            effect_event(effect, "sent")
    return bool(moved)


def effect_check_failed(effect_id: int, why: str) -> None:
    """Note why a readback or resolution could not conclude (shown on the effect's page).

    A note, not a transition: one UPDATE of two columns, no event — a long outage retried
    with backoff would otherwise bury the timeline under identical rows.
    """
    Effect.objects.filter(pk=effect_id).update(
        last_check_error=why[:500], last_check_error_at=timezone.now()
    )


def view_predates(read: Any, effect: Effect) -> bool:
    """The owner vouched for a view older than the effect's outcome: a replica that may not
    have seen the command yet (a read with no `observed_at` vouches for nothing either way;
    each caller says what that proves)."""
    return bool(read.observed_at and effect.outcome_at and read.observed_at < effect.outcome_at)


def source_held(source: str) -> bool:
    """Work against a quarantined source waits: readbacks and resolutions are held."""
    from reconcile_app.services.quarantine import quarantines_active

    return source in quarantines_active().sources


def effect_accept(
    *,
    effect_id: int,
    receipt: dict[str, Any],
    via: str,
    actor: str = "",
    known: Effect | None = None,
) -> Effect:
    """sent|unknown → accepted, with the receipt as evidence; then a readback is queued.
    `known`: the caller's copy of the effect (see `effect_locked`)."""
    from reconcile_app.tasks import effect_readback_task

    with transaction.atomic():
        effect = effect_locked(effect_id, known=known)
        moved = Effect.objects.filter(
            pk=effect.pk, status__in=[EffectStatus.SENT, EffectStatus.UNKNOWN]
        ).update(
            status=EffectStatus.ACCEPTED,
            receipt=receipt,
            resulting_version=receipt.get("resulting_version"),
            outcome_at=timezone.now(),
            last_check_error="",
            # If the readback task is lost, the sweep finds this and enqueues it again.
            next_check_at=timezone.now() + timedelta(seconds=READBACK_RECHECK_SECONDS),
        )
        if not moved:
            return effect
        entry = evidence_append(
            kind=EvidenceKind.EFFECT_RECEIPT,
            subject=effect.subject,
            field=effect.field,
            value=receipt,
            source=effect.source.name,
            observed_at=timezone.now(),
            derived_from=[effect.snapshot.snapshot_id],
            derived_from_held=True,
            note=f"{via}: {effect.action} with key {effect.idempotency_key}",
            generated_by=effect.idempotency_key,
        )
        effect_event(effect, via, {"receipt": receipt}, evidence_id=entry.evidence_id, actor=actor)
        enqueue_on_commit(effect_readback_task, effect.pk)
        effect_reload(effect)
    return effect


def request_unanswered_entry(effect: Effect, *, note: str) -> Any:
    """Seed 000: the ledger keeps "request sent; response not received", not "failed" — for
    a request whose answer was lost on the way and for one whose sender was lost with it."""
    return evidence_append(
        kind=EvidenceKind.TOOL_REQUEST,
        subject=effect.subject,
        field=effect.field,
        value={"idempotency_key": effect.idempotency_key, "outcome": "unknown"},
        source=effect.source.name,
        observed_at=timezone.now(),
        derived_from=[effect.snapshot.snapshot_id],
        derived_from_held=True,
        note=note,
        generated_by=effect.idempotency_key,
    )


def recorded_then_unavailable(key: str) -> DomainError:
    """The database failed after the effect was recorded (a disk full, a connection lost):
    the command may have reached the owner, so "nothing was written" would be untrue. The
    sweep settles the effect (sent → unknown → the owner's ledger; recorded → not_sent), and
    the same key asks about it, or sends it, without executing anything twice."""
    return DomainError(
        f"the database failed after the effect was recorded; it may have reached the owner. "
        f"Retry with the same Idempotency-Key ({key}) or read GET /api/v1/effects/{key}: "
        "nothing is executed twice",
        code="database_unavailable",
        status=503,
        title="Service unavailable",
        retry_after=5,
        idempotency_key=key,
    )
