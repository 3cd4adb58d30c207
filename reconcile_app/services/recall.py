"""Recall: a claim that names the memory record it was recalled from (docs/api.md "Reconcile").

The record must be one the caller may see (an agent its own memories, an operator any): else
400 `unknown_reference`, as for a memory write's derivation. What the claim leaves out
(subject, field, value, written_at, memory_class, purpose, derived_from) is taken from the
record; what it states must be what the record says (422 `claim_memory_mismatch`), so the
verdict, the snapshot and the lineage all speak of the record as it was written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from reconcile_app.canonical import same_value
from reconcile_app.errors import ValidationFailed
from reconcile_app.models import MemoryRecord, Principal
from reconcile_app.reconciliation.types import Claim
from reconcile_app.selectors.capabilities import principal_is_operator
from reconcile_app.services.memory_rules import Unprocessable


class _NotGiven:
    def __repr__(self) -> str:
        return "NOT_GIVEN"


# The claim did not state this (a JSON null is a value, so None cannot mean "absent").
NOT_GIVEN: Any = _NotGiven()


@dataclass(frozen=True)
class ClaimDraft:
    """A claim as the caller sent it: any field may be absent when `memory_id` names the
    record it was recalled from. Without `memory_id`, subject, field and value are required
    (the API's serializer refuses a claim without them)."""

    memory_id: str = ""
    subject: str = NOT_GIVEN
    field: str = NOT_GIVEN
    value: Any = NOT_GIVEN
    written_at: datetime | None = NOT_GIVEN
    memory_class: str = NOT_GIVEN
    purpose: str = NOT_GIVEN
    derived_from: tuple[str, ...] = NOT_GIVEN
    note: str = ""


# The claim's fields that a record also holds, in the order a mismatch reports them.
RECORDED = ("subject", "field", "value", "written_at", "memory_class", "purpose")


def claim_draft(given: Mapping[str, Any]) -> ClaimDraft:
    """A draft from the fields a caller sent (absent keys stay not given)."""
    fields: dict[str, Any] = {
        name: given[name] for name in ("memory_id", *RECORDED, "note") if name in given
    }
    if "derived_from" in given:
        fields["derived_from"] = tuple(given["derived_from"])
    return ClaimDraft(**fields)


def _draft_of(claim: Claim | ClaimDraft) -> ClaimDraft:
    if isinstance(claim, ClaimDraft):
        return claim
    return ClaimDraft(
        memory_id=claim.memory_id,
        subject=claim.subject,
        field=claim.field,
        value=claim.value,
        written_at=claim.written_at,
        memory_class=claim.memory_class,
        purpose=claim.purpose,
        derived_from=claim.derived_from,
        note=claim.note,
    )


def _given(value: Any, default: Any) -> Any:
    return default if value is NOT_GIVEN else value


def _differs(name: str, stated: Any, recorded: Any) -> bool:
    if name == "written_at":
        return stated is not None and bool(stated != recorded)
    if name == "field" and recorded == "":
        return False  # a fact record has no field: the claim says which one it speaks to
    if name in ("memory_class", "purpose") and stated == "":
        return False  # left blank (or null), as a claim without a record may: nothing stated
    return not same_value(stated, recorded)


def _from_record(index: int, draft: ClaimDraft, record: MemoryRecord) -> Claim:
    mismatched = [
        name
        for name in RECORDED
        if getattr(draft, name) is not NOT_GIVEN
        and _differs(name, getattr(draft, name), getattr(record, name))
    ]
    if mismatched:
        raise Unprocessable(
            f"claim {index} names memory {record.memory_id} but states another "
            f"{', '.join(mismatched)} than the record",
            code="claim_memory_mismatch",
            index=index,
            memory_id=record.memory_id,
            mismatched=mismatched,
        )
    field = _given(draft.field, record.field)
    if not field:
        raise Unprocessable(
            f"memory {record.memory_id} is the fact record {record.fact_key}, which has no "
            f"field: claim {index} must say which field of the contract it concerns",
            code="claim_field_missing",
            index=index,
            memory_id=record.memory_id,
        )
    return Claim(
        subject=record.subject,
        field=field,
        value=record.value,
        written_at=record.written_at,
        memory_class=record.memory_class,
        purpose=record.purpose,
        derived_from=tuple(_given(draft.derived_from, tuple(record.derived_from))),
        note=draft.note,
        memory_id=record.memory_id,
    )


def _as_stated(index: int, draft: ClaimDraft) -> Claim:
    unstated = [name for name in ("subject", "field", "value") if getattr(draft, name) is NOT_GIVEN]
    if unstated:
        raise ValidationFailed(
            f"claim {index} names no memory record, so it needs {', '.join(unstated)}",
            code="claim_incomplete",
            index=index,
            missing=unstated,
        )
    return Claim(
        subject=draft.subject,
        field=draft.field,
        value=draft.value,
        written_at=_given(draft.written_at, None),
        memory_class=_given(draft.memory_class, ""),
        purpose=_given(draft.purpose, ""),
        derived_from=tuple(_given(draft.derived_from, ())),
        note=draft.note,
    )


def claims_recall(*, principal: Principal, claims: Sequence[Claim | ClaimDraft]) -> list[Claim]:
    """The claims as the engine classifies them, each recalled one completed from (and
    checked against) its record. One query for every record cited, however many claims."""
    drafts = [_draft_of(claim) for claim in claims]
    wanted = {draft.memory_id for draft in drafts if draft.memory_id}
    records: dict[str, MemoryRecord] = {}
    if wanted:
        visible = MemoryRecord.objects.filter(memory_id__in=wanted)
        if not principal_is_operator(principal):
            visible = visible.filter(agent=principal)
        records = {record.memory_id: record for record in visible}
    missing = sorted(wanted - set(records))
    if missing:
        raise ValidationFailed(
            f"unknown references: {', '.join(missing)}", code="unknown_reference", missing=missing
        )
    return [
        _from_record(index, draft, records[draft.memory_id])
        if draft.memory_id
        else _as_stated(index, draft)
        for index, draft in enumerate(drafts)
    ]
