"""Reconcile's reads of the lineage graph, through lineage_app's public selectors, and the
lookups that say which of reconcile's rows a lineage node names.

Writes go the other way through one service, `reconcile_app.services.provenance`.
"""

from __future__ import annotations

from collections.abc import Sequence

from lineage_app.selectors.blast import blast_radius
from lineage_app.selectors.nodes import nodes_of_kind
from lineage_app.selectors.reach import reach, resolve_roots
from reconcile_app.models import DecisionReceipt, MemoryClass, MemoryRecord

# What a person reviews downstream of a correction, a source version or a memory class.
REVIEW_KINDS = ("snapshot", "decision", "effect", "memory")
# Each review kind's plural, as lists and tabs of them are named (the API's `review` keys).
REVIEW_PLURALS = {
    "snapshot": "snapshots",
    "decision": "decisions",
    "effect": "effects",
    "memory": "memories",
}


def evidence_roots(*, evidence_id: str) -> list[tuple[int, str]]:
    """The entry's lineage node as blast-radius roots (none if nothing recorded it)."""
    ids, names = resolve_roots([f"evidence:{evidence_id}"])
    return list(zip(ids, names, strict=True))


def memory_class_roots(memory_class: str) -> list[tuple[int, str]]:
    """Every memory record of the class (a poisoned class is quarantined as a whole).
    One query: the class's memory ids are a subquery."""
    memory_ids = MemoryRecord.objects.filter(memory_class=memory_class).values("memory_id")
    return nodes_of_kind("memory", memory_ids)


def memory_class_known(memory_class: str) -> bool:
    """A class declared, or one records were written under (its declaration gone since)."""
    return (
        MemoryClass.objects.filter(name=memory_class).exists()
        or MemoryRecord.objects.filter(memory_class=memory_class).exists()
    )


def memory_roots(memory_id: str) -> list[tuple[int, str]]:
    """One memory record's lineage node as blast-radius roots (a poisoned record is
    quarantined alone; none if nothing recorded it)."""
    return nodes_of_kind("memory", [memory_id])


def memory_fed(*, memory_id: str, limit: int = 1000) -> dict[str, list[str]]:
    """What one memory record fed, by review kind: the refs of the snapshots, decisions,
    effects and memories downstream of it (up to `limit` of them; one walk)."""
    radius = blast_radius(memory_roots(memory_id), kinds=list(REVIEW_KINDS), limit=limit)
    fed: dict[str, list[str]] = {kind: [] for kind in REVIEW_KINDS}
    for node in radius.nodes:
        fed[node["kind"]].append(node["ref"])
    return fed


def memory_citations(*, memory_id: str, limit: int = 1000) -> list[str]:
    """The snapshots that used the record itself: one hop down its lineage, where a claim
    citing it put it (what they fed in turn is in `memory_fed`, not here)."""
    roots = memory_roots(memory_id)
    found = reach(
        [pk for pk, _ in roots],
        [node for _, node in roots],
        depth=1,
        kinds=["snapshot"],
        limit=limit,
    )
    return [node["ref"] for node in found.nodes]


def snapshots_of_decisions(decision_ids: Sequence[str]) -> dict[str, str]:
    """decision id → the id of the snapshot it was made on, in one query."""
    return dict(
        DecisionReceipt.objects.filter(decision_id__in=decision_ids).values_list(
            "decision_id", "snapshot__snapshot_id"
        )
    )
