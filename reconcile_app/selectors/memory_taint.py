"""Corrections upstream of a memory: the evidence it derives from, directly or through the
snapshots and memories it was made from, corrected since (revoked or superseded).

A snapshot downstream of a correction is tainted and its commit refused (`snapshot_tainted`);
a suggested memory downstream of one is not promoted into force (`promotion_settle`), and its
page says why, so that a reviewer never approves a belief whose grounds were withdrawn.

A memory's grounds are what it names in `derived_from`, not the record it supersedes: the
successor replaces the record rather than being made from it (as a correction is not made
from the entry it replaces), and the lineage draws that edge as an invalidation, which walks
do not follow. Walked, it carried the superseded record's corrections onto its replacement,
and the very suggestion the refusal asks for — one made from what holds now — was refused
in turn.
"""

from __future__ import annotations

from dataclasses import dataclass

from lineage_app.selectors.reach import ancestor_refs
from reconcile_app.models import Correction, MemoryRecord
from reconcile_app.services.provenance import ref_node


@dataclass(frozen=True)
class Upstream:
    correction_id: str
    evidence_id: str  # the entry it corrected


def corrections_upstream(memory: MemoryRecord) -> list[Upstream]:
    """Every correction of an entry the memory derives from, oldest first. Three queries,
    whatever the depth of its derivation."""
    evidence = ancestor_refs([ref_node(ref) for ref in memory.derived_from], "evidence")
    if not evidence:
        return []
    found = (
        Correction.objects.filter(corrected__evidence_id__in=evidence)
        .order_by("created_at", "id")
        .values_list("correction_id", "corrected__evidence_id")
    )
    return [Upstream(correction_id, evidence_id) for correction_id, evidence_id in found]
