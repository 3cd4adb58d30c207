"""The sandbox: a built-in reference owner system with versioned records and fault injection.

It is a real owner system, not a mock: records live in the database, every write adds one to
the version with a compare-and-set, and faults make it misbehave the way real owners do.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from reconcile_app.canonical import content_hash, rfc3339
from reconcile_app.errors import Conflict, DomainError, NotFound, ValidationFailed
from reconcile_app.models import (
    SandboxAuthority,
    SandboxEffect,
    SandboxEvent,
    SandboxFault,
    SandboxRecord,
)


class SandboxUnavailable(DomainError):
    status = 503
    code = "owner_unavailable"
    title = "Owner unavailable"


@dataclass(frozen=True)
class SandboxRead:
    value: Any
    version: int
    valid_from: datetime
    recorded_at: datetime
    observed_at: datetime


def _fire(faults: list[SandboxFault], kind: str) -> SandboxFault | None:
    """Return the fault if one of this kind fires now, consuming one use of a counted fault."""
    for fault in faults:
        if fault.kind != kind:
            continue
        if fault.remaining is None:
            return fault
        # Conditional decrement: concurrent readers cannot both consume the last use.
        used = SandboxFault.objects.filter(pk=fault.pk, remaining__gt=0).update(
            remaining=F("remaining") - 1
        )
        SandboxFault.objects.filter(pk=fault.pk, remaining=0).delete()
        if used:
            return fault
    return None


def _slow_down(faults: list[SandboxFault]) -> None:
    latency = _fire(faults, SandboxFault.Kind.LATENCY)
    if latency is not None:
        time.sleep(min(latency.seconds, 60))


def sandbox_record_read(*, source: str, subject: str, field: str) -> SandboxRead:
    faults = list(SandboxFault.objects.filter(source=source))
    _slow_down(faults)
    if _fire(faults, SandboxFault.Kind.UNAVAILABLE):
        raise SandboxUnavailable(f"{source} is unavailable (injected fault)")
    record = (
        SandboxRecord.objects.filter(source=source, subject=subject, field=field)
        .order_by()
        .values("value", "version", "valid_from", "recorded_at")
        .first()
    )
    if record is None:
        raise NotFound(f"{source} has no record {subject}/{field}", code="record_not_found")
    now = timezone.now()
    lag = _fire(faults, SandboxFault.Kind.LAG)
    # A lagging replica vouches only for the moment it last caught up.
    observed_at = now - timedelta(seconds=lag.seconds) if lag else now
    return SandboxRead(
        value=record["value"],
        version=record["version"],
        valid_from=record["valid_from"],
        recorded_at=record["recorded_at"],
        observed_at=observed_at,
    )


def sandbox_record_write(
    *,
    source: str,
    subject: str,
    field: str,
    value: Any,
    valid_from: datetime | None = None,
    version: int | None = None,
    expected_version: int | None = None,
) -> SandboxRecord:
    """Write a record: version + 1, or jump forward to `version` (demo and drill set-up).

    With `expected_version` the write is a compare-and-set enforced in the UPDATE itself.
    """
    now = timezone.now()
    with transaction.atomic():
        current = SandboxRecord.objects.filter(source=source, subject=subject, field=field).first()
        if current is None:
            if expected_version is not None:
                raise Conflict(
                    f"{subject}/{field} does not exist",
                    code="version_changed",
                    status=412,
                    expected=expected_version,
                    found=None,
                )
            return SandboxRecord.objects.create(
                source=source,
                subject=subject,
                field=field,
                value=value,
                version=version or 1,
                valid_from=valid_from or now,
                recorded_at=now,
            )
        if version is not None and version <= current.version:
            raise ValidationFailed(
                f"version must move forward (current {current.version})", code="version_backwards"
            )
        expected = current.version if expected_version is None else expected_version
        new_version = version if version is not None else expected + 1
        updated = SandboxRecord.objects.filter(pk=current.pk, version=expected).update(
            value=value, version=new_version, valid_from=valid_from or now, recorded_at=now
        )
        if not updated:
            found = SandboxRecord.objects.values_list("version", flat=True).get(pk=current.pk)
            raise Conflict(
                f"version changed: expected {expected}, found {found}",
                code="version_changed",
                status=412,
                expected=expected,
                found=found,
            )
        current.refresh_from_db()
        return current


def sandbox_fault_add(
    *, source: str, kind: str, count: int | None = None, seconds: int = 0
) -> SandboxFault:
    if kind not in SandboxFault.Kind.values:
        raise ValidationFailed(f"unknown fault kind {kind!r}", code="unknown_fault")
    if count is not None and count < 1:
        raise ValidationFailed("count must be at least 1", code="invalid_count")
    if kind in (SandboxFault.Kind.LAG, SandboxFault.Kind.LATENCY) and seconds < 1:
        raise ValidationFailed(f"a {kind} fault needs seconds ≥ 1", code="invalid_seconds")
    return SandboxFault.objects.create(source=source, kind=kind, remaining=count, seconds=seconds)


def sandbox_faults_clear(*, source: str) -> int:
    deleted, _ = SandboxFault.objects.filter(source=source).delete()
    return deleted


def sandbox_authority_read(*, source: str, fact_key: str) -> SandboxAuthority:
    faults = list(SandboxFault.objects.filter(source=source))
    if _fire(faults, SandboxFault.Kind.UNAVAILABLE):
        raise SandboxUnavailable(f"{source} is unavailable (injected fault)")
    authority = SandboxAuthority.objects.filter(source=source, fact_key=fact_key).first()
    if authority is None:
        raise NotFound(
            f"{source} registers no authority for {fact_key}", code="authority_not_found"
        )
    return authority


def sandbox_authority_write(
    *, source: str, fact_key: str, owner: str, source_revision: str
) -> SandboxAuthority:
    authority, _ = SandboxAuthority.objects.update_or_create(
        source=source,
        fact_key=fact_key,
        defaults={"owner": owner, "source_revision": source_revision},
    )
    return authority


class SandboxTimeout(Exception):
    """The command committed, then the answer was lost (the `timeout_after_commit` fault)."""

    def __init__(self, message: str, seconds: int = 0) -> None:
        super().__init__(message)
        self.seconds = seconds


def _owner_fingerprint(subject: str, field: str, action: str, value: Any, expected: int) -> str:
    return content_hash(
        {"subject": subject, "field": field, "action": action, "value": value, "expected": expected}
    )


def sandbox_effect_apply(
    *,
    source: str,
    idempotency_key: str,
    subject: str,
    field: str,
    action: str,
    resulting_value: Any,
    expected_version: int,
) -> dict[str, Any]:
    """Apply a command with compare-and-set on the record version; at most once per key.

    Returns the receipt (the stored one again for a repeated key). Raises SandboxUnavailable
    before doing anything, Conflict 412 `version_changed` or 422 `idempotency_key_reused`, or
    SandboxTimeout after committing.
    """
    faults = list(SandboxFault.objects.filter(source=source))
    _slow_down(faults)
    if _fire(faults, SandboxFault.Kind.UNAVAILABLE):
        raise SandboxUnavailable(f"{source} is unavailable (injected fault)")
    fingerprint = _owner_fingerprint(subject, field, action, resulting_value, expected_version)
    with transaction.atomic():
        prior = (
            SandboxEffect.objects.select_for_update()
            .filter(source=source, idempotency_key=idempotency_key)
            .first()
        )
        if prior is not None:
            if prior.fingerprint != fingerprint:
                raise Conflict(
                    f"idempotency key {idempotency_key} was used for another command",
                    code="idempotency_key_reused",
                    status=422,
                )
            receipt = prior.receipt
        else:
            receipt = _execute(
                source,
                idempotency_key,
                fingerprint,
                subject,
                field,
                action,
                resulting_value,
                expected_version,
                dropped=_fire(faults, SandboxFault.Kind.DROP_POSTCONDITION) is not None,
            )
    timeout = _fire(faults, SandboxFault.Kind.TIMEOUT_AFTER_COMMIT)
    if timeout is not None:
        raise SandboxTimeout(
            f"{source} committed {idempotency_key}, then the answer was lost",
            seconds=min(timeout.seconds, 30),
        )
    return receipt


def _execute(
    source: str,
    idempotency_key: str,
    fingerprint: str,
    subject: str,
    field: str,
    action: str,
    resulting_value: Any,
    expected_version: int,
    *,
    dropped: bool,
) -> dict[str, Any]:
    now = timezone.now()
    record = SandboxRecord.objects.filter(source=source, subject=subject, field=field).first()
    found = record.version if record else None
    if record is None or record.version != expected_version:
        raise Conflict(
            f"version changed: expected {expected_version}, found {found}",
            code="version_changed",
            status=412,
            expected=expected_version,
            found=found,
        )
    if not dropped:
        # The version check is in the UPDATE itself: no lost update under contention.
        updated = SandboxRecord.objects.filter(pk=record.pk, version=expected_version).update(
            value=resulting_value, version=expected_version + 1, valid_from=now, recorded_at=now
        )
        if not updated:
            found = SandboxRecord.objects.values_list("version", flat=True).get(pk=record.pk)
            raise Conflict(
                f"version changed: expected {expected_version}, found {found}",
                code="version_changed",
                status=412,
                expected=expected_version,
                found=found,
            )
    receipt = {
        "receipt_id": f"rcpt-{secrets.token_hex(6)}",
        "idempotency_key": idempotency_key,
        "subject": subject,
        "field": field,
        "action": action,
        "resulting_value": resulting_value,
        "resulting_version": expected_version + 1,
        "committed_at": rfc3339(now),
    }
    SandboxEffect.objects.create(
        source=source,
        idempotency_key=idempotency_key,
        fingerprint=fingerprint,
        receipt=receipt,
        applied=not dropped,
    )
    return receipt


def sandbox_effect_lookup(*, source: str, idempotency_key: str) -> dict[str, Any]:
    """The owner's ledger: the receipt, NotFound if it never executed, or unavailable."""
    faults = list(SandboxFault.objects.filter(source=source))
    if _fire(faults, SandboxFault.Kind.UNAVAILABLE):
        raise SandboxUnavailable(f"{source} is unavailable (injected fault)")
    found = SandboxEffect.objects.filter(source=source, idempotency_key=idempotency_key).first()
    if found is None:
        raise NotFound(f"{source} never executed {idempotency_key}", code="effect_not_found")
    return found.receipt


def sandbox_event_append(
    *,
    source: str,
    event_id: str,
    type: str,
    subject: str,
    field: str = "",
    value: Any = None,
    seq: int | None = None,
    valid_from: datetime | None = None,
) -> SandboxEvent:
    """Record an event. Without `seq` it goes after the source's last event."""
    now = timezone.now()
    with transaction.atomic():
        if SandboxEvent.objects.filter(source=source, event_id=event_id).exists():
            raise Conflict(f"event {event_id} already recorded", code="event_exists")
        if seq is None:
            last = (
                SandboxEvent.objects.filter(source=source)
                .order_by("-seq")
                .values_list("seq", flat=True)
                .first()
            )
            seq = (last or 0) + 1
        return SandboxEvent.objects.create(
            source=source,
            event_id=event_id,
            seq=seq,
            type=type,
            subject=subject,
            field=field,
            value=value,
            valid_from=valid_from or now,
            recorded_at=now,
        )


@dataclass(frozen=True)
class SandboxEventsRead:
    events: list[SandboxEvent]
    observed_at: datetime


def sandbox_events_read(
    *,
    source: str,
    subject: str,
    after: int | None = None,
    recorded_before: datetime | None = None,
) -> SandboxEventsRead:
    """The subject's events in `seq` order, as delivered (faults may duplicate or reorder)."""
    faults = list(SandboxFault.objects.filter(source=source))
    _slow_down(faults)
    if _fire(faults, SandboxFault.Kind.UNAVAILABLE):
        raise SandboxUnavailable(f"{source} is unavailable (injected fault)")
    events = SandboxEvent.objects.filter(source=source, subject=subject)
    if after is not None:
        events = events.filter(seq__gt=after)
    if recorded_before is not None:
        events = events.filter(recorded_at__lte=recorded_before)
    delivered = list(events.order_by("seq", "id"))
    if _fire(faults, SandboxFault.Kind.DUPLICATE_DELIVERY):
        delivered = delivered + delivered[: max(1, len(delivered) // 2)]
    if _fire(faults, SandboxFault.Kind.REORDER):
        delivered = list(reversed(delivered))
    now = timezone.now()
    lag = _fire(faults, SandboxFault.Kind.LAG)
    return SandboxEventsRead(
        events=delivered, observed_at=now - timedelta(seconds=lag.seconds) if lag else now
    )
