"""One ledger entry as the console shows it: the entry, its neighbours in the hash chain, the
entries that revoke or supersede it, the correction it belongs to, and the effect that
generated it (a receipt, a readback, a resolution). Four queries."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q

from lineage_app.choices import Relation
from lineage_app.selectors.nodes import upstream_refs
from reconcile_app.errors import NotFound
from reconcile_app.models import Correction, EvidenceEntry


@dataclass(frozen=True)
class EvidenceDetail:
    entry: EvidenceEntry
    previous: EvidenceEntry | None
    next: EvidenceEntry | None
    corrected_by: list[EvidenceEntry]  # entries that revoke or supersede this one
    correction: Correction | None  # the correction of this entry, if it was corrected
    correction_made: Correction | None  # the correction this entry records, if it is one
    generated_by: list[str]  # keys of the effects that generated it

    @property
    def previous_links(self) -> bool | None:
        """Does this entry's `prev_hash` name the previous entry's hash? None at the start."""
        if self.previous is None:
            return None
        return self.entry.prev_hash == self.previous.hash

    @property
    def next_links(self) -> bool | None:
        if self.next is None:
            return None
        return self.next.prev_hash == self.entry.hash


def evidence_detail(*, evidence_id: str) -> EvidenceDetail:
    entry = (
        EvidenceEntry.objects.select_related("revokes", "supersedes", "recorded_by")
        .filter(evidence_id=evidence_id)
        .first()
    )
    if entry is None:
        raise NotFound(f"no evidence {evidence_id}", code="evidence_not_found")
    related = list(
        EvidenceEntry.objects.filter(
            Q(seq__in=[entry.seq - 1, entry.seq + 1]) | Q(revokes=entry) | Q(supersedes=entry)
        ).order_by("seq")
    )
    corrections = list(
        Correction.objects.filter(Q(corrected=entry) | Q(entry=entry)).select_related(
            "corrected", "entry", "actor"
        )
    )
    generated_by = upstream_refs(
        node=f"evidence:{evidence_id}", relation=Relation.WAS_GENERATED_BY, kind="effect"
    )
    return EvidenceDetail(
        entry=entry,
        previous=next((item for item in related if item.seq == entry.seq - 1), None),
        next=next((item for item in related if item.seq == entry.seq + 1), None),
        corrected_by=[
            item for item in related if entry.pk in (item.revokes_id, item.supersedes_id)
        ],
        correction=next((c for c in corrections if c.corrected_id == entry.pk), None),
        correction_made=next((c for c in corrections if c.entry_id == entry.pk), None),
        generated_by=generated_by,
    )
