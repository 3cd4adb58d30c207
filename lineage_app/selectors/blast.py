"""Blast radius: everything downstream of some roots. Lineage's own entry points are any node
and a source version range (`source:<name>@<version>` nodes); a host registers its own
(`lineage_app.registry.register_entry_point`)."""

from __future__ import annotations

from datetime import datetime

from lineage_app.models import Node
from lineage_app.selectors.reach import Reach, reach


def source_version_nodes(source: str) -> list[tuple[int, str, int]]:
    """Every recorded `source:<name>@<version>` node: (row id, node id, version)."""
    prefix = f"{source}@"
    found = []
    for pk, ref in Node.objects.filter(kind="source", ref__startswith=prefix).values_list(
        "pk", "ref"
    ):
        try:
            version = int(ref[len(prefix) :])
        except ValueError:
            continue
        found.append((pk, f"source:{ref}", version))
    return found


def roots_for_source_versions(source: str, low: int, high: int) -> list[tuple[int, str]]:
    """Every recorded `source:<name>@<version>` node with low ≤ version ≤ high."""
    return [
        (pk, node) for pk, node, version in source_version_nodes(source) if low <= version <= high
    ]


def blast_radius(
    roots: list[tuple[int, str]],
    *,
    as_of: datetime | None = None,
    kinds: list[str] | None = None,
    limit: int = 100,
    offset: int = 0,
) -> Reach:
    """Descendants of the (row id, `kind:ref`) roots: counts by kind and one page."""
    return reach(
        [pk for pk, _ in roots],
        [node for _, node in roots],
        direction="descendants",
        as_of=as_of,
        kinds=kinds,
        limit=limit,
        offset=offset,
    )
