"""Blast radius entry points: one node, a source version range, a reducer, a memory class."""

from __future__ import annotations

from datetime import datetime

from lineage_app.models import Node
from lineage_app.selectors.reach import Reach, reach

REVIEW_KINDS = ("snapshot", "decision", "effect", "memory")


def roots_for_source_versions(source: str, low: int, high: int) -> list[tuple[int, str]]:
    """Every recorded `source:<name>@<version>` node with low ≤ version ≤ high."""
    prefix = f"{source}@"
    found = []
    for pk, ref in Node.objects.filter(kind="source", ref__startswith=prefix).values_list(
        "pk", "ref"
    ):
        try:
            version = int(ref[len(prefix) :])
        except ValueError:
            continue
        if low <= version <= high:
            found.append((pk, f"source:{ref}"))
    return found


def roots_for_memory_class(memory_class: str) -> list[tuple[int, str]]:
    """Every memory record of the class (a poisoned class is quarantined as a whole)."""
    from reconcile_app.models import MemoryRecord

    ids = MemoryRecord.objects.filter(memory_class=memory_class).values("memory_id")
    return [
        (pk, f"memory:{ref}")
        for pk, ref in Node.objects.filter(kind="memory", ref__in=ids).values_list("pk", "ref")
    ]


def blast_radius(
    roots: list[tuple[int, str]],
    *,
    as_of: datetime | None = None,
    kinds: list[str] | None = None,
    limit: int = 100,
    offset: int = 0,
) -> Reach:
    return reach(
        [pk for pk, _ in roots],
        [node for _, node in roots],
        direction="descendants",
        as_of=as_of,
        kinds=kinds,
        limit=limit,
        offset=offset,
    )
