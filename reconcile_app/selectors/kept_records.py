"""The fact records approving a fact key's escalation would keep current, and what of them is
the reviewer's own: a record they wrote, or evidence they attested that a record was derived
from. Either way one person would vouch for the record and keep it (the four eyes would be
two), so escalation_decide refuses the approval (403 `self_approval_forbidden`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import Q, QuerySet

from reconcile_app.choices import MEMORY_IN_FORCE
from reconcile_app.models import Escalation, MemoryRecord
from reconcile_app.selectors.approvals import evidence_recorded_by

# A fact record with no owner (owner_missing asks who owns it).
OWNERLESS = Q(owner__isnull=True) | Q(owner="")


def records_kept(escalation: Escalation, selected_ref: str | None) -> QuerySet[MemoryRecord]:
    """The one selected, or, approving an ownerless record's escalation without a selection,
    the records in force that have an owner (the ownerless ones are retired); none for any
    other question, or a selection that is no candidate (refused as invalid_selection)."""
    if escalation.fact_key and selected_ref and selected_ref in escalation.candidate_refs:
        return MemoryRecord.objects.filter(memory_id=selected_ref)
    if escalation.fact_key and not selected_ref and escalation.code == "owner_missing":
        return MemoryRecord.objects.filter(
            fact_key=escalation.fact_key, status__in=MEMORY_IN_FORCE
        ).exclude(OWNERLESS)
    return MemoryRecord.objects.none()


def records_kept_written_by(
    reviewer: Any, escalation: Escalation, selected_ref: str | None
) -> list[str]:
    """The records approving would keep current that `reviewer` wrote."""
    kept = records_kept(escalation, selected_ref)
    return sorted(kept.filter(agent__user_id=reviewer.pk).values_list("memory_id", flat=True))


def records_kept_attested_by(
    reviewer: Any, escalation: Escalation, selected_ref: str | None
) -> list[str]:
    """The evidence `reviewer` attested that the records approving would keep were derived
    from (a fact key's question; decisions and promotions: `evidence_attested_by`)."""
    used = {
        ref
        for refs in records_kept(escalation, selected_ref).values_list("derived_from", flat=True)
        for ref in refs or ()
    }
    return evidence_recorded_by(reviewer, used)


def records_grounded_on(reviewer: Any, records: Iterable[MemoryRecord | None]) -> set[str]:
    """The records among `records` derived from evidence `reviewer` attested: approving never
    keeps one of them (the console offers them to another reviewer only). One query."""
    derived = {record.memory_id: set(record.derived_from or ()) for record in records if record}
    used = set().union(*derived.values())
    mine = set(evidence_recorded_by(reviewer, used))
    return {memory_id for memory_id, refs in derived.items() if refs & mine}
