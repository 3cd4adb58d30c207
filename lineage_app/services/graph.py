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
from lineage_app.selectors.nodes import node_ids


@dataclass(frozen=True)
class Link:
    """An edge `src` → `dst`: `dst` depends on `src` (read `dst <relation> src`), both
    named `kind:ref`."""

    src: str
    dst: str
    relation: str


def split_node_id(node_id: str) -> tuple[str, str]:
    """`kind:ref` as (kind, ref); ValueError for anything else."""
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
    """Record the links (and any node first mentioned), labelling new nodes from `labels`.
    Recording a link again changes nothing: nodes and edges are insert-only."""
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
