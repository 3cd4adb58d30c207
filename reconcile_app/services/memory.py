"""Memory admission: a remembered belief enters only with its derivation and scope, under its
declared class's rules (services/memory_rules.py), and leaves by its kind's retirement rule."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from reconcile_app.advisory_locks import names_held
from reconcile_app.choices import MEMORY_IN_FORCE, MemoryKind, MemoryStatus
from reconcile_app.epochs import epochs_seen
from reconcile_app.errors import Conflict, Forbidden, ValidationFailed
from reconcile_app.models import MemoryClass, MemoryRecord, Principal
from reconcile_app.selectors.capabilities import (
    may_write_fact,
    principal_is_operator,
    principal_is_person,
)
from reconcile_app.services.audit import audit_record
from reconcile_app.services.escalations import (
    fact_candidates_check,
    fact_key_write_check,
    fact_keys_held,
)
from reconcile_app.services.evidence import ledger_held
from reconcile_app.services.fresh_ids import new_record_id
from reconcile_app.services.memory_rules import (
    EXPIRING_KINDS,
    admission_check,
    consent_check,
    default_expiry,
    expiry_check,
    memory_class_get,
    reviewed,
    target_check,
    written_at_check,
)
from reconcile_app.services.memory_status import memory_status_begin, memory_status_move
from reconcile_app.services.principals import access_changed_since
from reconcile_app.services.promotions import promotion_open
from reconcile_app.services.provenance import memory_lineage
from reconcile_app.services.quarantine import memory_class_check
from reconcile_app.services.references import missing_references

MEMORY_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$")
# The advisory-lock namespace of preference targets ("PREF" in ASCII), beside fact keys'.
PREFERENCE_LOCK = 0x50524546


def memory_admit(
    *,
    agent: Principal,
    memory_class: str,
    subject: str,
    purpose: str,
    value: Any,
    derived_from: Sequence[str],
    field: str = "",
    fact_key: str = "",
    note: str = "",
    valid_until: date | None = None,
    owner: str | None = None,
    source_revision: str = "",
    supersedes: str | None = None,
    written_at: datetime | None = None,
    memory_id: str | None = None,
    request_id: str = "",
) -> MemoryRecord:
    """Admit one memory for `agent` (the writing principal), with its derivation.

    The class must be declared (422 `memory_class_unknown`); a preference needs consent; a
    reviewed class's memory is a suggestion until a reviewer promotes it. Fact records
    (`fact_key`) need `fact:PATTERN` (operators may write any, audited); a memory derived
    from a candidate of a frozen fact key is frozen with it (423).
    """
    if not derived_from:
        raise ValidationFailed(
            "a memory must say what it was derived from (derived_from is empty)",
            code="derivation_missing",
        )
    if not field and not fact_key:
        raise ValidationFailed("a memory needs a field or a fact_key", code="target_missing")
    if memory_id is not None and not MEMORY_ID.match(memory_id):
        raise ValidationFailed("memory_id has invalid characters", code="invalid_memory_id")
    written_at_check(written_at)
    seen = epochs_seen()
    declared = memory_class_get(memory_class)
    target_check(declared, field=field, fact_key=fact_key)
    operator = principal_is_operator(agent)
    _fact_write_check(agent, fact_key)
    # An agent derives from its own memories and snapshots only.
    own = None if operator else agent
    missing = missing_references(derived_from, visible_to=own)
    if supersedes and not _supersedable(supersedes, own=own, fact_key=fact_key):
        missing.append(f"memory:{supersedes}")
    if missing:
        raise ValidationFailed(
            f"unknown references: {', '.join(missing)}", code="unknown_reference", missing=missing
        )
    consent_check(declared, subject=subject, derived_from=derived_from)
    today = fact_today()
    expiry_check(declared, valid_until=valid_until, today=today)
    if valid_until is None:
        valid_until = default_expiry(declared, today=today)
    review = reviewed(declared)
    with transaction.atomic():
        # The class's quarantine waits for the write (and counts it) or committed before the
        # class is checked; a fact capability withdrawn meanwhile is asked again.
        if access_changed_since(agent, seen):
            _fact_write_check(agent, fact_key)
        fact_keys_held(fact_key, derived_from)
        if declared.kind == MemoryKind.PREFERENCE:
            _preference_held(memory_class, subject=subject, field=field)
        memory_class_check(memory_class)
        fact_key_write_check(fact_key)
        fact_candidates_check(derived_from)
        previous = _superseded(supersedes, subject=subject, field=field, fact_key=fact_key)
        admission_check(declared, derived_from=derived_from, supersedes=previous)
        # Stamped once the locks above are held: a write that waited on them (a freeze, the
        # record it supersedes, SQLite's write lock) would otherwise commit a time already
        # past, changing `as_of` answers given for that moment meanwhile.
        now = timezone.now()
        new_id = new_record_id(
            MemoryRecord,
            "memory_id",
            "mem-",
            memory_id,
            noun="memory",
            taken_code="memory_id_taken",
        )
        if previous is None and declared.kind == MemoryKind.PREFERENCE:
            previous = _preference_in_force(memory_class, subject=subject, field=field, own=own)
        try:
            # Two writes under one chosen id both found it free above: the second breaks the
            # unique index here, and its whole transaction is undone.
            record = MemoryRecord.objects.create(
                memory_id=new_id,
                agent=agent,
                memory_class=memory_class,
                subject=subject,
                purpose=purpose,
                field=field,
                fact_key=fact_key,
                value=value,
                note=note,
                derived_from=list(derived_from),
                owner=owner,
                source_revision=source_revision,
                valid_until=valid_until,
                supersedes=previous,
                status=MemoryStatus.SUGGESTED if review else MemoryStatus.CURRENT,
                written_at=written_at or now,
                recorded_at=now,
            )
        except IntegrityError as exc:
            raise Conflict(f"memory {new_id} already exists", code="memory_id_taken") from exc
        memory_status_begin(
            memory=record, cause="suggested: awaiting review" if review else "admitted"
        )
        if review:
            # What it would supersede stays in force until a reviewer promotes it.
            promotion_open(memory=record, owner=declared.owner, requested_by=agent)
        elif previous is not None:
            memory_status_move(
                memory_ids=[previous.pk],
                source_statuses=MEMORY_IN_FORCE,
                to=MemoryStatus.SUPERSEDED,
                cause=f"superseded by {new_id}",
                at=now,
            )
        memory_lineage(
            memory_id=new_id,
            derived_from=record.derived_from,
            supersedes=previous.memory_id if previous is not None else None,
            label=f"{memory_class} {subject}.{field or fact_key} = {value!r}",
        )
        if principal_is_person(agent):
            audit_record(
                actor=agent.user,
                action="memory.write",
                object_kind="memory",
                object_ref=new_id,
                reason=note,
                request_id=request_id,
                after={
                    "memory_class": memory_class,
                    "subject": subject,
                    "target": fact_key or field,
                    "supersedes": supersedes,
                    "status": record.status,
                },
            )
        if declared.kind == MemoryKind.PREFERENCE:
            # Last, the ledger's head held to the end (evidence.ledger_held, after every row
            # lock, as an effect's commit takes it): consent revoked since it was checked
            # above is seen now, and one revoked later waits for this record.
            ledger_held()
            consent_check(declared, subject=subject, derived_from=derived_from)
    return record


def _fact_write_check(agent: Principal, fact_key: str) -> None:
    if fact_key and not may_write_fact(agent, fact_key):
        raise Forbidden(
            f"{agent.name} may not write fact records of {fact_key} (needs fact:PATTERN)",
            code="fact_write_not_allowed",
            fact_key=fact_key,
        )


def _supersedable(memory_id: str, *, own: Principal | None, fact_key: str) -> bool:
    """Whether the record a write names in `supersedes` is there for the writer: any for an
    operator (`own` None); for an agent its own, or a record of the fact key it writes (its
    writers may supersede any record of that key, whoever wrote it: the capability governs
    the key). Another principal's other records are not there, as for a read (404): a write
    names nothing of them, not even what they are about (`supersession_mismatch`)."""
    records = MemoryRecord.objects.filter(memory_id=memory_id)
    if own is not None:
        records = records.filter(Q(agent=own) | Q(fact_key=fact_key) if fact_key else Q(agent=own))
    return records.exists()


def _superseded(
    supersedes: str | None, *, subject: str, field: str, fact_key: str
) -> MemoryRecord | None:
    """The record a write names in `supersedes`, locked; it must be in force and about the
    same target (a concurrent supersession of it makes this one a 409)."""
    if not supersedes:
        return None
    previous = MemoryRecord.objects.select_for_update().get(memory_id=supersedes)
    if (previous.subject, previous.field, previous.fact_key) != (subject, field, fact_key):
        raise ValidationFailed(
            f"{supersedes} is about {previous.subject} "
            f"{previous.fact_key or previous.field}, not this memory's target",
            code="supersession_mismatch",
        )
    if previous.status not in MEMORY_IN_FORCE:
        raise Conflict(
            f"{supersedes} is {previous.status}, not in force: it cannot be superseded",
            code="supersession_conflict",
        )
    return previous


def _preference_held(memory_class: str, *, subject: str, field: str) -> None:
    """Inside the write's transaction, after the epochs and the fact-key locks and before any
    row lock: one preference write per class, subject and field at a time. Locking the
    record in force alone is not enough: a second write waiting on it finds it superseded
    when the first commits, and its statement cannot see the first's new record, so it would
    supersede nothing and leave two in force. After this lock, `_preference_in_force` is a
    new statement and sees what the holder wrote."""
    names_held(PREFERENCE_LOCK, ["\x1f".join((memory_class, subject, field))])


def _preference_in_force(
    memory_class: str, *, subject: str, field: str, own: Principal | None
) -> MemoryRecord | None:
    """A newer preference for the same subject and field supersedes the one in force: the
    writer's own (`own`), or any for an operator (None). One agent's write never retires,
    nor names, a memory another agent wrote, which it could not read nor supersede by id."""
    in_force = MemoryRecord.objects.select_for_update().filter(
        memory_class=memory_class, subject=subject, field=field, status__in=MEMORY_IN_FORCE
    )
    if own is not None:
        in_force = in_force.filter(agent=own)
    return in_force.order_by("-recorded_at", "-pk").first()


def fact_today() -> date:
    """Today in the declared fact timezone, in which valid_until is inclusive."""
    return timezone.now().astimezone(ZoneInfo(settings.RECONCILE_FACT_TIMEZONE)).date()


def memories_expire(*, today: date) -> int:
    """Records in force whose valid_until has passed expire (inclusive through it), for the
    kinds that expire by date; procedural and policy memory retires only by review.

    Moves are conditional on status and recorded with their cause, so a concurrent
    supersession and a rerun are both harmless.
    """
    expiring_classes = MemoryClass.objects.filter(kind__in=EXPIRING_KINDS).values("name")
    due = MemoryRecord.objects.filter(
        status__in=MEMORY_IN_FORCE, valid_until__lt=today, memory_class__in=expiring_classes
    ).values_list("pk", flat=True)
    with transaction.atomic():
        moved = memory_status_move(
            memory_ids=list(due),
            source_statuses=MEMORY_IN_FORCE,
            to=MemoryStatus.EXPIRED,
            cause=f"valid_until passed (expiry run on {today.isoformat()})",
        )
    return len(moved)
