"""Versioned records and fact-key authorities of the sandbox owner system."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from config import raw_select
from reconcile_app.errors import Conflict, NotFound, ValidationFailed
from sandbox_app.choices import FaultKind
from sandbox_app.models import (
    SandboxAuthority,
    SandboxAuthorityChange,
    SandboxFault,
    SandboxRecord,
)
from sandbox_app.services.faults import (
    SandboxNoAnswer,
    SandboxUnavailable,
    fault_fires,
    sandbox_audit,
    slow_down,
)


@dataclass(frozen=True)
class SandboxRead:
    value: Any
    version: int
    valid_from: datetime
    recorded_at: datetime
    observed_at: datetime


def sandbox_records_read(
    reads: list[tuple[str, str, str]], within: dict[str, float] | None = None
) -> list[SandboxRead | SandboxUnavailable | SandboxNoAnswer | NotFound]:
    """Several reads, (source, subject, field) each, answered in order: one query when no
    fault is set on their sources (each record says whether its source has one). A read of a
    source with faults, or of a record not found, is asked again one at a time, so it meets
    its faults exactly as `sandbox_record_read` would, within its source's deadline."""
    if not reads:
        return []
    found: dict[tuple[str, str, str], list[Any]] = {}
    faulty: set[str] = set()
    for row in raw_select.select(_records_sql(len(reads)), _records_params(reads), RECORD_FIELDS):
        found[(row[0], row[1], row[2])] = row
        if row[7]:
            faulty.add(row[0])
    now = timezone.now()
    answers: list[SandboxRead | SandboxUnavailable | SandboxNoAnswer | NotFound] = []
    for source, subject, field in reads:
        record = found.get((source, subject, field))
        if source in faulty or record is None:
            try:
                answers.append(
                    sandbox_record_read(
                        source=source,
                        subject=subject,
                        field=field,
                        within=(within or {}).get(source),
                    )
                )
            except (SandboxUnavailable, SandboxNoAnswer, NotFound) as exc:
                answers.append(exc)
            continue
        value, version, valid_from, recorded_at = record[3:7]
        answers.append(SandboxRead(value, version, valid_from, recorded_at, observed_at=now))
    return answers


RECORD_COLUMNS = ("source", "subject", "field", "value", "version", "valid_from", "recorded_at")
# Each column's field, for its conversion; the last column (the source has faults) is as read.
RECORD_FIELDS = [*raw_select.fields(SandboxRecord, *RECORD_COLUMNS), None]


@functools.lru_cache(maxsize=64)
def _records_sql(count: int) -> str:
    """The records asked for, each with whether its source has a fault: the ORM's statement
    (OR'ed conditions, which the unique index answers), without building a queryset."""

    def record(name: str) -> str:
        return raw_select.column(SandboxRecord, name, "r")

    wanted = f"({record('source')} = %s AND {record('subject')} = %s AND {record('field')} = %s)"
    faults = raw_select.table(SandboxFault, "f")
    fault_source = raw_select.column(SandboxFault, "source", "f")
    return (
        f"SELECT {', '.join(map(record, RECORD_COLUMNS))}, "  # noqa: S608  # nosec B608
        f"EXISTS (SELECT 1 FROM {faults} WHERE {fault_source} = {record('source')}) "
        f"FROM {raw_select.table(SandboxRecord, 'r')} WHERE {' OR '.join([wanted] * count)}"
    )


def _records_params(reads: list[tuple[str, str, str]]) -> list[str]:
    return [part for read in reads for part in read]


def sandbox_record_read(
    *, source: str, subject: str, field: str, within: float | None = None
) -> SandboxRead:
    """One record. Raises SandboxUnavailable, NotFound, or SandboxNoAnswer when a latency
    fault outlasts `within` seconds."""
    faults = list(SandboxFault.objects.filter(source=source))
    slow_down(faults, within)
    if fault_fires(faults, FaultKind.UNAVAILABLE):
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
    lag = fault_fires(faults, FaultKind.LAG)
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
    actor: Any = None,
    request_id: str = "",
) -> SandboxRecord:
    """Write a record: version + 1, or jump forward to `version` (demo and drill set-up).

    With `expected_version` the write is a compare-and-set enforced in the UPDATE itself.
    With an `actor` (a person over the API) the write is audited in its transaction.
    """
    with transaction.atomic():
        record = _record_write(source, subject, field, value, valid_from, version, expected_version)
        sandbox_audit(
            actor,
            "sandbox.record.write",
            f"{source}/{subject}/{field}",
            request_id,
            {"value": value, "version": record.version},
        )
    return record


def _record_write(
    source: str,
    subject: str,
    field: str,
    value: Any,
    valid_from: datetime | None,
    version: int | None,
    expected_version: int | None,
) -> SandboxRecord:
    now = timezone.now()
    with transaction.atomic():
        # Locked: a write without `expected_version` goes on top of whatever is there, so two
        # at once take turns rather than both meaning the same next version (a 412 nobody's
        # precondition asked for).
        record = SandboxRecord.objects.select_for_update().filter(
            source=source, subject=subject, field=field
        )
        current = record.first()
        if current is None:
            if expected_version is not None:
                raise Conflict(
                    f"{subject}/{field} does not exist",
                    code="version_changed",
                    status=412,
                    expected=expected_version,
                    found=None,
                )
            try:
                with transaction.atomic():  # a savepoint: a first write at the same time wins
                    return SandboxRecord.objects.create(
                        source=source,
                        subject=subject,
                        field=field,
                        value=value,
                        version=version or 1,
                        valid_from=valid_from or now,
                        recorded_at=now,
                    )
            except IntegrityError:
                current = record.get()  # committed by then: this write goes on top of it
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


@dataclass(frozen=True)
class SandboxAuthorityAnswer:
    """Who owned a fact key and at which revision: now, or at `as_of`, and since when."""

    owner: str
    source_revision: str
    since: datetime
    as_of: datetime | None = None


def sandbox_authority_read(
    *, source: str, fact_key: str, as_of: datetime | None = None
) -> SandboxAuthorityAnswer:
    """The key's authority now, or with `as_of` as this owner recorded it then (its history).

    404 `authority_not_found` when none was registered (by then); 422 `as_of_in_future` for a
    time that has not happened yet: an answer about it could still change.
    """
    faults = list(SandboxFault.objects.filter(source=source))
    if fault_fires(faults, FaultKind.UNAVAILABLE):
        raise SandboxUnavailable(f"{source} is unavailable (injected fault)")
    if as_of is None:
        authority = SandboxAuthority.objects.filter(source=source, fact_key=fact_key).first()
        if authority is None:
            raise NotFound(
                f"{source} registers no authority for {fact_key}", code="authority_not_found"
            )
        return SandboxAuthorityAnswer(
            owner=authority.owner,
            source_revision=authority.source_revision,
            since=authority.updated_at,
        )
    if as_of > timezone.now():
        raise ValidationFailed(
            "as_of is in the future: the owner's history only reaches now",
            code="as_of_in_future",
            status=422,
        )
    # Of the changes stamped by then, the last written: each stamp is the clock of the host
    # the write reached, and a change from a host running behind can be stamped before the
    # one it replaced. By stamp, the history ended at the older answer, never the present.
    # Writers change the row in turn (update_or_create locks it), so ids are their order.
    change = (
        SandboxAuthorityChange.objects.filter(source=source, fact_key=fact_key, at__lte=as_of)
        .order_by("-id")
        .first()
    )
    if change is None:
        raise NotFound(
            f"{source} registered no authority for {fact_key} by {as_of.isoformat()}",
            code="authority_not_found",
        )
    return SandboxAuthorityAnswer(
        owner=change.owner, source_revision=change.source_revision, since=change.at, as_of=as_of
    )


def sandbox_authority_write(
    *,
    source: str,
    fact_key: str,
    owner: str,
    source_revision: str,
    actor: Any = None,
    request_id: str = "",
) -> SandboxAuthority:
    """Set a key's authority, and keep it in the history from this moment on."""
    with transaction.atomic():
        authority, _ = SandboxAuthority.objects.update_or_create(
            source=source,
            fact_key=fact_key,
            defaults={"owner": owner, "source_revision": source_revision},
        )
        # Taken after update_or_create locked the row: on one clock, concurrent writers
        # record their moments in the order they changed it (across hosts, ids keep it).
        SandboxAuthorityChange.objects.create(
            source=source,
            fact_key=fact_key,
            owner=owner,
            source_revision=source_revision,
            at=timezone.now(),
        )
        sandbox_audit(
            actor,
            "sandbox.authority.write",
            f"{source}/{fact_key}",
            request_id,
            {"owner": owner, "source_revision": source_revision},
        )
    return authority
