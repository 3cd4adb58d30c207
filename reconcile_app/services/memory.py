"""Memory admission: a remembered belief enters only with its derivation and scope."""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from reconcile_app.choices import MemoryStatus
from reconcile_app.errors import Conflict, Forbidden, ValidationFailed
from reconcile_app.models import MemoryRecord, Principal
from reconcile_app.selectors.capabilities import (
    may_write_fact,
    principal_is_operator,
    principal_is_person,
)
from reconcile_app.services.audit import audit_record
from reconcile_app.services.escalations import fact_candidates_check, fact_key_write_check
from reconcile_app.services.provenance import memory_lineage
from reconcile_app.services.quarantine import memory_class_check
from reconcile_app.services.references import missing_references

MEMORY_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$")


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

    Fact records (`fact_key`) need `fact:PATTERN` (operators may write any, audited); a
    memory derived from a candidate of a frozen fact key is frozen with it (423).
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
    operator = principal_is_operator(agent)
    if fact_key and not may_write_fact(agent, fact_key):
        raise Forbidden(
            f"{agent.name} may not write fact records of {fact_key} (needs fact:PATTERN)",
            code="fact_write_not_allowed",
            fact_key=fact_key,
        )
    # An agent derives from its own memories and snapshots only; a fact key's writers may
    # supersede any record of that key, whoever wrote it (the capability governs the key).
    own = None if operator else agent
    missing = missing_references(derived_from, visible_to=own)
    if supersedes:
        missing += missing_references(
            [f"memory:{supersedes}"], visible_to=None if fact_key else own
        )
    if missing:
        raise ValidationFailed(
            f"unknown references: {', '.join(missing)}", code="unknown_reference", missing=missing
        )
    now = timezone.now()
    with transaction.atomic():
        memory_class_check(memory_class)
        fact_key_write_check(fact_key)
        fact_candidates_check(derived_from)
        previous = None
        if supersedes:
            # Lock the superseded record and flip it in the same transaction as the insert;
            # the conditional UPDATE makes exactly one of two concurrent supersessions win.
            previous = MemoryRecord.objects.select_for_update().get(memory_id=supersedes)
            if (previous.subject, previous.field, previous.fact_key) != (subject, field, fact_key):
                raise ValidationFailed(
                    f"{supersedes} is about {previous.subject} "
                    f"{previous.fact_key or previous.field}, not this memory's target",
                    code="supersession_mismatch",
                )
            flipped = MemoryRecord.objects.filter(
                pk=previous.pk, status=MemoryStatus.CURRENT
            ).update(status=MemoryStatus.SUPERSEDED)
            if not flipped:
                raise Conflict(
                    f"{supersedes} is {previous.status}, not current: it cannot be superseded",
                    code="supersession_conflict",
                )
        new_id = memory_id or f"mem-{secrets.token_hex(6)}"
        if MemoryRecord.objects.filter(memory_id=new_id).exists():
            raise Conflict(f"memory {new_id} already exists", code="memory_id_taken")
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
            status=MemoryStatus.CURRENT,
            written_at=written_at or now,
            recorded_at=now,
        )
        memory_lineage(
            memory_id=new_id,
            derived_from=record.derived_from,
            supersedes=supersedes,
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
                },
            )
    return record


def fact_today() -> date:
    """Today in the declared fact timezone, in which valid_until is inclusive."""
    return timezone.now().astimezone(ZoneInfo(settings.RECONCILE_FACT_TIMEZONE)).date()


def memories_expire(*, today: date) -> int:
    """Mark current records whose valid_until has passed as expired (inclusive through it).

    One UPDATE guarded by status, so a concurrent supersession and a rerun are both harmless.
    """
    return MemoryRecord.objects.filter(status=MemoryStatus.CURRENT, valid_until__lt=today).update(
        status=MemoryStatus.EXPIRED
    )
