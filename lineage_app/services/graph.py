"""Write lineage: nodes and PROV edges, inside the caller's transaction.

Callers pass plain `kind:ref` ids; nodes are created on first mention. Three statements per
call however many edges: insert missing nodes, read their ids, insert missing edges.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from lineage_app.models import Edge, Node


@dataclass(frozen=True)
class Link:
    src: str
    dst: str
    relation: str


def split_node_id(node_id: str) -> tuple[str, str]:
    kind, sep, ref = node_id.partition(":")
    if not sep or not kind or not ref:
        raise ValueError(f"node id {node_id!r} is not kind:ref")
    return kind, ref


def graph_record(
    links: Iterable[Link],
    *,
    labels: dict[str, str] | None = None,
    at: datetime | None = None,
) -> None:
    links = list(links)
    if not links:
        return
    at = at or timezone.now()
    labels = labels or {}
    wanted = {node for link in links for node in (link.src, link.dst)}
    pairs = {node: split_node_id(node) for node in wanted}
    Node.objects.bulk_create(
        [
            Node(kind=kind, ref=ref, label=labels.get(node, "")[:300], recorded_at=at)
            for node, (kind, ref) in pairs.items()
        ],
        ignore_conflicts=True,
    )
    ids = node_ids(wanted)
    Edge.objects.bulk_create(
        [
            Edge(src_id=ids[link.src], dst_id=ids[link.dst], relation=link.relation, recorded_at=at)
            for link in links
        ],
        ignore_conflicts=True,
    )


def node_ids(node_ids_wanted: Iterable[str]) -> dict[str, int]:
    """Map `kind:ref` ids to row ids in one query (one `ref IN (...)` per kind, not per id)."""
    from django.db.models import Q

    by_kind: dict[str, list[str]] = {}
    for node in node_ids_wanted:
        kind, sep, ref = node.partition(":")
        if sep and kind and ref:  # anything else names no node
            by_kind.setdefault(kind, []).append(ref)
    if not by_kind:
        return {}
    query = Q()
    for kind, refs in by_kind.items():
        query |= Q(kind=kind, ref__in=refs)
    return {
        f"{kind}:{ref}": pk
        for pk, kind, ref in Node.objects.filter(query).values_list("pk", "kind", "ref")
    }
