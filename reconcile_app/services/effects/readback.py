"""Readbacks: an independent read of the target checks an accepted effect's postcondition.

Nothing here re-sends a command: a readback only reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NoReturn

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from reconcile_app.canonical import rfc3339, same_value
from reconcile_app.choices import EffectStatus, EvidenceKind, ReadStatus
from reconcile_app.models import Effect, StateRead
from reconcile_app.services.effects.state import (
    READBACK_STATUSES,
    effect_check_failed,
    effect_event,
    effect_locked,
    source_held,
    view_predates,
)
from reconcile_app.services.evidence import evidence_append
from reconcile_app.sources import ReadResult, adapter_for

# The reads of the written version looked at: all must agree for one to prove the postcondition.
READS_OF_THE_VERSION_ASKED = 20


class OwnerUnavailable(Exception):
    """The owner could not be read now; the caller retries later (with backoff)."""


def _cannot_conclude(effect: Effect, why: str) -> NoReturn:
    """Note why on the effect, then raise so the task retries with backoff."""
    effect_check_failed(effect.pk, why)
    raise OwnerUnavailable(why)


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
    if source_held(effect.source.name):
        # Held, not failed: the readback waits for the quarantine to be lifted.
        _cannot_conclude(effect, f"{effect.source.name} is quarantined; readback held")
    Effect.objects.filter(pk=effect.pk).update(readback_attempts=F("readback_attempts") + 1)
    read = adapter_for(effect.source).read(effect.subject, effect.field)  # no lock held
    if read.status != ReadStatus.OK:
        _cannot_conclude(
            effect, f"{effect.source.name}: owner {read.status} {read.detail}".rstrip()
        )
    if view_predates(read, effect):
        _cannot_conclude(
            effect,
            f"{effect.source.name} answered from a view older than the commit "
            f"({rfc3339(read.observed_at)})",
        )
    reached = same_value(read.value, effect.resulting_value) and (
        read.version is not None
        and effect.resulting_version is not None
        and read.version >= effect.resulting_version
    )
    # Overwritten before the readback (a later command, the agent's own next one among them):
    # the value now is another's. A read Reconcile recorded of the version this effect wrote
    # still shows whether it held; a later decision on the target made one.
    seen_in = _written_version_read_in(effect) if not reached and _moved_past(read, effect) else ""
    reached = reached or bool(seen_in)
    # The owner took another command from a version before this write after acknowledging it:
    # it never held this write, and the value now (however equal) is the other command's.
    overwritten = _accepted_from_before_it(effect) if reached else None
    if overwritten is not None:
        reached, seen_in = False, ""
    if not reached and overwritten is None and read.observed_at is None:
        # A view that vouches for no time may be one from before the commit: it cannot show
        # the postcondition absent (a view holding the written version is proof at any age,
        # and so is the owner's taking another command from before it).
        _cannot_conclude(
            effect, f"{effect.source.name} answered with a view that vouches for no time"
        )
    with transaction.atomic():
        effect = effect_locked(effect_id, known=effect)
        if effect.status not in READBACK_STATUSES:
            return effect
        status = EffectStatus.VERIFIED if reached else EffectStatus.POSTCONDITION_FAILED
        entry = evidence_append(
            kind=EvidenceKind.READBACK,
            subject=effect.subject,
            field=effect.field,
            value={
                "value": read.value,
                "version": read.version,
                "verified": reached,
                **({"written_version_read_in": seen_in} if seen_in else {}),
                **(overwritten.said() if overwritten else {}),
            },
            source=effect.source.name,
            observed_at=read.observed_at or timezone.now(),
            derived_from=[effect.snapshot.snapshot_id],
            derived_from_held=True,
            note=(
                f"readback of {effect.idempotency_key}: expected {effect.resulting_value!r} at "
                f"version ≥ {effect.resulting_version}, found {read.value!r} at {read.version}"
                + (
                    f"; overwritten since, and snapshot {seen_in} read "
                    f"{effect.resulting_value!r} at version {effect.resulting_version}"
                    if seen_in
                    else ""
                )
                + (
                    f"; the owner accepted {overwritten.key or 'a command of another principal'} "
                    f"from version {overwritten.from_version} after this write's receipt, so "
                    "it never held this write"
                    if overwritten
                    else ""
                )
            ),
            generated_by=effect.idempotency_key,
        )
        Effect.objects.filter(pk=effect.pk, status=effect.status).update(
            status=status,
            verified_at=timezone.now(),
            next_check_at=None,
            last_check_error="",
            last_check_error_at=None,
        )
        effect_event(
            effect,
            "readback",
            {
                "value": read.value,
                "version": read.version,
                "result": status,
                **(overwritten.said() if overwritten else {}),
            },
            evidence_id=entry.evidence_id,
        )
        effect.refresh_from_db()
    return effect


def _moved_past(read: ReadResult, effect: Effect) -> bool:
    return (
        read.version is not None
        and effect.resulting_version is not None
        and read.version > effect.resulting_version
    )


@dataclass(frozen=True)
class TakenInstead:
    """The command the owner took instead of a dropped write: its key when it is the same
    principal's (another principal's keys are not this one's to read: an agent reads only its
    own effects, and a key may say what it was for), and the version it was taken from."""

    key: str
    from_version: int

    def said(self) -> dict[str, Any]:
        return {
            "overwritten_from_version": self.from_version,
            **({"overwritten_by": self.key} if self.key else {}),
        }


def _accepted_from_before_it(effect: Effect) -> TakenInstead | None:
    """Another effect on this target that the owner accepted from a version before this one's
    resulting version, sent after this one's receipt came back. An owner that checks If-Match
    cannot accept that from a state holding this write, so this write was acknowledged and
    not kept (a lagging owner that kept it refuses the other)."""
    if effect.resulting_version is None or effect.outcome_at is None:
        return None
    later = (
        Effect.objects.filter(
            source_id=effect.source_id,
            subject=effect.subject,
            field=effect.field,
            expected_version__lt=effect.resulting_version,
            receipt__isnull=False,  # the owner's own word; a person's resolution is not
            sent_at__gte=effect.outcome_at,
        )
        .exclude(pk=effect.pk)
        .order_by("sent_at", "pk")
        .values_list("idempotency_key", "expected_version", "principal_id")
        .first()
    )
    if later is None:
        return None
    key, from_version, principal_id = later
    return TakenInstead(key if principal_id == effect.principal_id else "", from_version)


def _written_version_read_in(effect: Effect) -> str:
    """The snapshot whose read of the target found this effect's value at the version the
    effect wrote, when every read of that version Reconcile recorded agrees; else "". A
    version is the owner's name for one state of the record: a read of it at any time shows
    what the write left (an owner whose reads of one version disagree proves nothing). Only
    reads answered after the command left count: one from before shows another writer's state
    under that number (a person's "it happened" guesses the version: expected + 1)."""
    reads = list(
        StateRead.objects.filter(
            source_id=effect.source_id,
            version=effect.resulting_version,
            field=effect.field,
            snapshot__subject=effect.subject,
            status=ReadStatus.OK,
            read_at__gte=effect.sent_at or effect.created_at,
        )
        .order_by("id")
        .values_list("value", "snapshot__snapshot_id")[:READS_OF_THE_VERSION_ASKED]
    )
    if reads and all(same_value(value, effect.resulting_value) for value, _ in reads):
        return str(reads[0][1])
    return ""
