"""Quarantine a source, a memory class or one memory record, list what it touches, and lift it."""

from __future__ import annotations

import math
import re
import secrets
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from reconcile_app.canonical import rfc3339
from reconcile_app.choices import (
    EffectStatus,
    QuarantineScope,
    QuarantineStatus,
)
from reconcile_app.epochs import EpochCache, epochs_held, pinned_epoch
from reconcile_app.errors import Conflict, Locked, NotFound, ValidationFailed
from reconcile_app.instants import FUTURE_TOLERANCE
from reconcile_app.limits import says_nothing
from reconcile_app.models import (
    AuditEvent,
    Effect,
    MemoryRecord,
    Quarantine,
    QuarantineEpoch,
    Source,
)
from reconcile_app.selectors.quarantine_preview import DEFAULT_LOOKBACK, quarantine_preview
from reconcile_app.services.audit import audit_record
from reconcile_app.services.enqueue import enqueue_on_commit

ACTIVE = (QuarantineStatus.APPLYING, QuarantineStatus.APPLIED)
MEMORY_CLASS = re.compile(r"^[-a-zA-Z0-9_]{1,100}$")


def in_force(now: datetime | None = None) -> Q:
    """Active and not past its end. A quarantine stops holding at its `ends_at` exactly; the
    sweep (quarantines_expire, every minute) then records the lift, its audit row and the
    held effects' resumption. Judged by the status alone, it held up to a minute longer,
    commits answering 423 `Retry-After: 1` all that while."""
    return Q(status__in=ACTIVE) & (Q(ends_at__isnull=True) | Q(ends_at__gt=now or timezone.now()))


@dataclass(frozen=True)
class ActiveQuarantines:
    sources: frozenset[str]
    memory_classes: frozenset[str]
    epoch: int
    # memory id → the quarantine holding it (a claim's reason names the quarantine).
    memories: Mapping[str, str] = field(default_factory=dict)
    # The first of their ends: from then on this set is out of date, although no epoch moved.
    ends_next: datetime | None = None


_ACTIVE_QUARANTINES: EpochCache[ActiveQuarantines] = EpochCache("quarantine")


def quarantines_active() -> ActiveQuarantines:
    """The active quarantines and the epoch they are at least as new as.

    The epoch is read first: a quarantine committed between the two reads is then either in
    the rows or moves the epoch past the one returned, and the snapshot's transaction
    notices (epoch_check). Read the other way round, the rows could miss it unnoticed.
    """
    pinned = pinned_epoch("quarantine")
    if pinned is not None:
        active = _ACTIVE_QUARANTINES.get("active", lambda: _quarantines_load(pinned))
        if active.ends_next is None or active.ends_next > timezone.now():
            return active
        _ACTIVE_QUARANTINES.clear()  # one has ended since the set was loaded
        return _ACTIVE_QUARANTINES.get("active", lambda: _quarantines_load(pinned))
    epoch = QuarantineEpoch.objects.filter(pk=1).values_list("epoch", flat=True).first() or 0
    return _quarantines_load(epoch)


def _quarantines_load(epoch: int) -> ActiveQuarantines:
    rows = list(
        Quarantine.objects.filter(in_force()).values_list(
            "scope", "target", "quarantine_id", "ends_at"
        )
    )
    ends = [end for *_, end in rows if end is not None]
    return ActiveQuarantines(
        sources=frozenset(t for s, t, *_ in rows if s == QuarantineScope.SOURCE),
        memory_classes=frozenset(t for s, t, *_ in rows if s == QuarantineScope.MEMORY_CLASS),
        memories={t: q for s, t, q, _ in rows if s == QuarantineScope.MEMORY},
        epoch=epoch,
        ends_next=min(ends, default=None),
    )


def quarantined_memory_classes() -> frozenset[str]:
    """The memory classes under a quarantine in force (one query)."""
    return frozenset(
        Quarantine.objects.filter(in_force(), scope=QuarantineScope.MEMORY_CLASS).values_list(
            "target", flat=True
        )
    )


def epoch_check(expected: int) -> bool:
    """Inside the snapshot's transaction: is the quarantine view it used still current?

    Held until the transaction ends (`epochs.epochs_held`): on PostgreSQL a quarantine being
    created or lifted waits for the snapshot to commit, or committed before and is seen here;
    SQLite's IMMEDIATE transactions serialise writers, which gives the same guarantee.
    """
    return (epochs_held().quarantine or 0) == expected


def _bump_epoch() -> None:
    # The row's triggers (migration 0018) move it on every change to the table too; this
    # covers a database whose row was flushed. Random: a rolled-back value is never reused.
    QuarantineEpoch.objects.get_or_create(pk=1)
    QuarantineEpoch.objects.filter(pk=1).update(epoch=secrets.randbelow(2**52))


def source_check(source: str) -> None:
    if pinned_epoch("quarantine") is not None and source not in quarantines_active().sources:
        return  # the pinned copy of the quarantine set answers without a query
    refusal = source_quarantined_errors({source}).get(source)
    if refusal is not None:
        raise refusal


def source_quarantined_errors(sources: Collection[str]) -> dict[str, Locked]:
    """Source → 423 `source_quarantined`, for each of `sources` a quarantine holds now (one
    query; one quarantine per target at a time). A quarantine with an end lifts itself then
    (quarantines_expire): a retry after it can succeed, so say when. Without one, only a
    person lifts it: no time to give. Whether a snapshot's reads are held up:
    services/effects/standing.py."""
    if not sources:
        return {}
    now = timezone.now()
    errors: dict[str, Locked] = {}
    for source, ends_at in Quarantine.objects.filter(
        in_force(), scope=QuarantineScope.SOURCE, target__in=sorted(sources)
    ).values_list("target", "ends_at"):
        retry_after = (
            max(1, math.ceil((ends_at - now).total_seconds())) if ends_at is not None else None
        )
        errors[source] = Locked(
            f"source {source} is quarantined",
            code="source_quarantined",
            source=source,
            ends_at=rfc3339(ends_at),
            retry_after=retry_after,
        )
    return errors


def source_quarantines_in_force(source: str) -> QuerySet[Quarantine]:
    """The source's quarantines in force, for a statement that must see a lift at once."""
    return Quarantine.objects.filter(in_force(), scope=QuarantineScope.SOURCE, target=source)


def memory_class_check(memory_class: str) -> None:
    if Quarantine.objects.filter(
        in_force(), scope=QuarantineScope.MEMORY_CLASS, target=memory_class
    ).exists():
        raise Locked(
            f"memory class {memory_class} is quarantined",
            code="memory_class_quarantined",
            memory_class=memory_class,
        )


def memory_quarantine_check(memory_id: str) -> None:
    """423 `memory_quarantined` while a quarantine holds this one record."""
    held = (
        Quarantine.objects.filter(in_force(), scope=QuarantineScope.MEMORY, target=memory_id)
        .values_list("quarantine_id", flat=True)
        .first()
    )
    if held is not None:
        raise Locked(
            f"memory {memory_id} is quarantined ({held})",
            code="memory_quarantined",
            memory_id=memory_id,
            quarantine_id=held,
        )


def quarantine_create(
    *,
    scope: str,
    target: str,
    reason: str,
    actor: Any,
    since: datetime | None = None,
    ends_at: datetime | None = None,
    request_id: str = "",
) -> Quarantine:
    from reconcile_app.tasks import quarantine_apply_task

    if says_nothing(reason):
        raise ValidationFailed("a quarantine needs a reason", code="reason_required")
    if scope == QuarantineScope.SOURCE:
        if not Source.objects.filter(name=target).exists():
            raise ValidationFailed(f"no source {target!r}", code="unknown_source")
    elif scope == QuarantineScope.MEMORY_CLASS:
        if not MEMORY_CLASS.match(target):
            raise ValidationFailed("memory_class must be a slug", code="invalid_target")
    elif scope == QuarantineScope.MEMORY:
        if not MemoryRecord.objects.filter(memory_id=target).exists():
            raise ValidationFailed(f"no memory {target!r}", code="unknown_memory")
    else:
        raise ValidationFailed("scope must be source, memory_class or memory", code="invalid_scope")
    now = timezone.now()
    if ends_at is not None and ends_at <= now:
        raise ValidationFailed("ends_at must be in the future", code="invalid_ends_at")
    if since is not None and since > now + FUTURE_TOLERANCE:
        # The counts and the affected lists look back from `since`: one dated ahead (a
        # mistyped year) would show a quarantine that touched nothing. A caller's clock may
        # run ahead of ours by as much as an attestation's may.
        raise ValidationFailed("since must not be in the future", code="invalid_since")
    # One that has ended is lifted first (as the sweep would), so it does not stand in the way.
    quarantines_expire(now=now, scope=scope, target=target)
    with transaction.atomic():
        _bump_epoch()
        if Quarantine.objects.filter(scope=scope, target=target, status__in=ACTIVE).exists():
            raise Conflict(f"{scope} {target} is already quarantined", code="already_quarantined")
        quarantine = Quarantine.objects.create(
            quarantine_id=f"qua_{secrets.token_hex(8)}",
            scope=scope,
            target=target,
            reason=reason,
            status=QuarantineStatus.APPLYING,
            since=since or now - DEFAULT_LOOKBACK,
            ends_at=ends_at,
            created_by=actor if getattr(actor, "pk", None) else None,
            created_at=now,
        )
        audit_record(
            actor=actor,
            action="quarantine.create",
            object_kind="quarantine",
            object_ref=quarantine.quarantine_id,
            reason=reason,
            request_id=request_id,
            # The end a person chose is theirs: the system's lift then is traced to it.
            after={
                "scope": scope,
                "target": target,
                "status": quarantine.status,
                "since": rfc3339(quarantine.since),
                "ends_at": rfc3339(ends_at),
            },
        )
        enqueue_on_commit(quarantine_apply_task, quarantine.quarantine_id)
    return quarantine


def quarantine_apply(*, quarantine_id: str) -> Quarantine:
    """List and count what the quarantine affects. Idempotent: applying twice is a no-op."""
    quarantine = Quarantine.objects.filter(quarantine_id=quarantine_id).first()
    if quarantine is None:
        raise NotFound(f"no quarantine {quarantine_id}", code="quarantine_not_found")
    if quarantine.status != QuarantineStatus.APPLYING:
        return quarantine
    affected = quarantine_preview(
        scope=quarantine.scope, target=quarantine.target, since=quarantine.since
    )
    Quarantine.objects.filter(pk=quarantine.pk, status=QuarantineStatus.APPLYING).update(
        status=QuarantineStatus.APPLIED, affected=affected, applied_at=timezone.now()
    )
    quarantine.refresh_from_db()
    return quarantine


def quarantine_lift(
    *, quarantine_id: str, reason: str, actor: Any, request_id: str = "", on_behalf_of: str = ""
) -> Quarantine:
    """A person's lift (`actor`), or the system's (None); `on_behalf_of` names the person
    whose choice the system carries out (the end they set when they quarantined)."""
    if says_nothing(reason):
        raise ValidationFailed("lifting a quarantine needs a reason", code="reason_required")
    with transaction.atomic():
        quarantine = (
            Quarantine.objects.select_for_update().filter(quarantine_id=quarantine_id).first()
        )
        if quarantine is None:
            raise NotFound(f"no quarantine {quarantine_id}", code="quarantine_not_found")
        if quarantine.status not in ACTIVE:
            raise Conflict(f"{quarantine_id} is already lifted", code="not_active")
        _bump_epoch()
        before = quarantine.status
        now = timezone.now()
        Quarantine.objects.filter(pk=quarantine.pk, status__in=ACTIVE).update(
            status=QuarantineStatus.LIFTED,
            lifted_at=now,
            lifted_by=actor if getattr(actor, "pk", None) else None,
            lift_reason=reason,
        )
        after: dict[str, Any] = {"status": QuarantineStatus.LIFTED}
        if on_behalf_of:
            after["on_behalf_of"] = on_behalf_of
        if quarantine.scope == QuarantineScope.SOURCE:
            after["effects_resumed"] = _held_effects_resume(quarantine.target, now)
        audit_record(
            actor=actor,
            action="quarantine.lift",
            object_kind="quarantine",
            object_ref=quarantine_id,
            reason=reason,
            request_id=request_id,
            before={"status": before},
            after=after,
        )
        quarantine.refresh_from_db()
    return quarantine


def _held_effects_resume(source: str, now: datetime) -> int:
    """The source's readbacks and resolutions, held while it was quarantined, are due again.

    Each held check backed off like a failed one (up to an hour apart), so without this an
    unknown outcome waited that long after the lift. Due now, the next sweep (every 30 s)
    queues them, at its own pace. Returns how many effects wait on a check of the source."""
    waiting = Effect.objects.filter(
        source__name=source, status__in=[EffectStatus.ACCEPTED, EffectStatus.UNKNOWN]
    )
    waiting.filter(next_check_at__gt=now).update(next_check_at=now)
    return waiting.count()


def quarantines_expire(
    *, now: datetime | None = None, scope: str | None = None, target: str | None = None
) -> int:
    """Scheduled: quarantines past their end time lift themselves (with that reason); with
    `scope` and `target`, only that target's."""
    now = now or timezone.now()
    expired = 0
    ended = Quarantine.objects.filter(status__in=ACTIVE, ends_at__lte=now)
    if scope is not None:
        ended = ended.filter(scope=scope, target=target)
    for quarantine_id, chosen_by in ended.values_list("quarantine_id", "created_by__username"):
        # The end was its creator's choice: the row names them (`after.on_behalf_of`; its
        # actor stays `system`, so `?actor=` does not find it) and carries their request's id,
        # so `?request_id=` of that request finds the lift too; the sweep's task id led nowhere.
        asked = AuditEvent.objects.filter(action="quarantine.create", object_ref=quarantine_id)
        try:
            quarantine_lift(
                quarantine_id=quarantine_id,
                reason="ended at its scheduled end time",
                actor=None,
                request_id=asked.values_list("request_id", flat=True).first() or "",
                on_behalf_of=chosen_by or "",
            )
            expired += 1
        except Conflict:
            continue  # lifted meanwhile by a person
    return expired
