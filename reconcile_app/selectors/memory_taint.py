"""Corrections upstream of a memory: the evidence it derives from, directly or through the
snapshots and memories it was made from, corrected since (revoked or superseded).

A snapshot downstream of a correction is tainted and its commit refused (`snapshot_tainted`);
a suggested memory downstream of one is not promoted into force (`promotion_settle`), and its
page says why, so that a reviewer never approves a belief whose grounds were withdrawn.
"""

from __future__ import annotations

from dataclasses import dataclass

from lineage_app.selectors.reach import ancestor_refs
from reconcile_app.models import Correction


@dataclass(frozen=True)
class Upstream:
    correction_id: str
    evidence_id: str  # the entry it corrected


def corrections_upstream(memory_id: str) -> list[Upstream]:
    """Every correction of an entry the memory derives from, oldest first. Three queries,
    whatever the depth of its derivation."""
    evidence = ancestor_refs(f"memory:{memory_id}", "evidence")
    if not evidence:
        return []
    found = (
        Correction.objects.filter(corrected__evidence_id__in=evidence)
        .order_by("created_at", "id")
        .values_list("correction_id", "corrected__evidence_id")
    )
    return [Upstream(correction_id, evidence_id) for correction_id, evidence_id in found]
