"""The neighbourhood of one lineage node, bounded for drawing.

Upstream (ancestors) and downstream (descendants) within `depth` hops, as two recursive CTEs
in one statement. Whatever the size of the graph, drawing one node costs the same five
queries: the root, the counts by kind on each side, the nearest `cap` nodes, the entries
across an invalidation from those (drawn, not counted), and the edges between the nodes
drawn. The cap keeps the picture readable and the page fast; the counts
still say how much was left out.

As in `reach`, the SQL is built from our own table and column names and `%s` placeholders
only; every value is a bound parameter (hence the S608 exemptions).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.db import connection
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from lineage_app.models import Edge, Node
from lineage_app.registry import registry
from lineage_app.selectors.nodes import invalidation_edges
from lineage_app.selectors.reach import INVALIDATION

MAX_GRAPH_DEPTH = 6
DEFAULT_GRAPH_DEPTH = 3
# Beyond this many nodes a layered drawing stops being readable.
GRAPH_NODE_CAP = 120
UPSTREAM, DOWNSTREAM, ROOT = "upstream", "downstream", "root"
# Drawn across a `wasInvalidatedBy` edge from a walked node (what replaced it, or what it
# replaced), one hop: neither upstream nor downstream, so never counted as either.
REPLACEMENT = "replacement"
# A shortened id pasted from a table ("snap_1a2b3c…") still finds its node.
PREFIX_MIN_LENGTH = 6
PREFIX_MATCHES = 10


@dataclass(frozen=True)
class GraphNode:
    pk: int
    kind: str
    ref: str
    label: str
    recorded_at: datetime
    side: str  # root, upstream, downstream or replacement
    distance: int

    @property
    def node_id(self) -> str:
        return f"{self.kind}:{self.ref}"


@dataclass(frozen=True)
class GraphEdge:
    src: int
    dst: int
    relation: str


@dataclass(frozen=True)
class Subgraph:
    root: GraphNode
    depth: int
    cap: int
    nodes: list[GraphNode]  # the root first, then the nearest nodes on either side
    edges: list[GraphEdge]
    counts: dict[str, dict[str, int]] = field(default_factory=dict)  # side → kind → n

    @property
    def total(self) -> int:
        """Nodes within `depth` on either side, the root excluded."""
        return sum(sum(by_kind.values()) for by_kind in self.counts.values())

    @property
    def walked_drawn(self) -> int:
        """Upstream and downstream nodes drawn (the root and replacements aside)."""
        return sum(1 for node in self.nodes if node.side in (UPSTREAM, DOWNSTREAM))

    @property
    def not_drawn(self) -> int:
        return self.total - self.walked_drawn

    def count_rows(self) -> list[tuple[str, int, int]]:
        """(kind, upstream, downstream) for every kind found, in layer order."""
        kinds = set(self.counts.get(UPSTREAM, {})) | set(self.counts.get(DOWNSTREAM, {}))
        return [
            (
                kind,
                self.counts.get(UPSTREAM, {}).get(kind, 0),
                self.counts.get(DOWNSTREAM, {}).get(kind, 0),
            )
            for kind in sorted(kinds, key=registry.kind_order)
        ]


def _as_node(node: Node, *, side: str = ROOT, distance: int = 0) -> GraphNode:
    return GraphNode(
        pk=node.pk,
        kind=node.kind,
        ref=node.ref,
        label=node.label,
        recorded_at=node.recorded_at,
        side=side,
        distance=distance,
    )


def node_candidates(text: str) -> list[Node]:
    """Nodes a search box entry may mean, best first.

    `kind:ref` names one node; a bare id matches any node with that ref, the kinds ranked as
    registered (`search_rank`). Only when nothing matches exactly is a prefix tried, so a
    shortened id still resolves.
    """
    text = text.strip()
    if not text:
        return []
    query = Q(ref=text)
    kind, sep, ref = text.partition(":")
    if sep and kind and ref:
        query |= Q(kind=kind, ref=ref)
    found = list(Node.objects.filter(query)[: PREFIX_MATCHES + 1])
    if not found and len(text.rstrip("…")) >= PREFIX_MIN_LENGTH:
        prefix = text.rstrip("…")
        found = list(Node.objects.filter(ref__startswith=prefix).order_by("ref")[:PREFIX_MATCHES])
        # Some refs begin with another node's ref (a read's with its snapshot's id): a
        # shortened id matching such a kind and another one means the other one.
        prefixed = [node for node in found if registry.kind(node.kind).ref_prefixed_by_other_ids]
        if len(prefixed) < len(found):
            found = [node for node in found if node not in prefixed]
    exact = [node for node in found if node.node_id == text]
    rest = sorted(
        (node for node in found if node.node_id != text),
        key=lambda node: (registry.search_rank(node.kind), node.ref),
    )
    return exact + rest


def _neighbourhood_cte() -> str:
    """`near(id, side, distance)`: every node within %s hops either way, at its nearest.

    Parameters, in order: root, depth (down), root, depth (up), root, root. With the depth in
    each row, UNION dedupes per (node, depth); the bound keeps that finite. The walks follow
    derivation, as the descendants and ancestors API does (`reach._cte`): an invalidation is
    not, and walked it counted what was built on a correction as downstream of the entry
    it corrected.
    """
    edge = Edge._meta.db_table
    derivation = f"e.relation <> '{INVALIDATION}'"
    return (
        f"WITH RECURSIVE down(id, depth) AS ("  # noqa: S608  # nosec B608
        f" SELECT e.dst_id, 1 FROM {edge} e WHERE e.src_id = %s AND {derivation}"
        f" UNION"
        f" SELECT e.dst_id, d.depth + 1 FROM {edge} e JOIN down d ON e.src_id = d.id"
        f" WHERE d.depth < %s AND {derivation}"
        f"), up(id, depth) AS ("
        f" SELECT e.src_id, 1 FROM {edge} e WHERE e.dst_id = %s AND {derivation}"
        f" UNION"
        f" SELECT e.src_id, u.depth + 1 FROM {edge} e JOIN up u ON e.dst_id = u.id"
        f" WHERE u.depth < %s AND {derivation}"
        f"), near(id, side, distance) AS ("
        f" SELECT id, '{DOWNSTREAM}', MIN(depth) FROM down WHERE id <> %s GROUP BY id"
        f" UNION ALL"
        f" SELECT id, '{UPSTREAM}', MIN(depth) FROM up WHERE id <> %s GROUP BY id"
        f")"
    )


def subgraph(
    *, root: Node, depth: int = DEFAULT_GRAPH_DEPTH, cap: int = GRAPH_NODE_CAP
) -> Subgraph:
    """The root's neighbourhood: counts by kind on each side, the nearest `cap` nodes, and the
    edges between them. Nearest first, so every node drawn is connected to the root through
    nodes drawn."""
    depth = max(1, min(depth, MAX_GRAPH_DEPTH))
    node_table = Node._meta.db_table
    cte = _neighbourhood_cte()
    params: list[Any] = [root.pk, depth, root.pk, depth, root.pk, root.pk]
    counts: dict[str, dict[str, int]] = {UPSTREAM: {}, DOWNSTREAM: {}}
    with connection.cursor() as cursor:
        cursor.execute(
            f"{cte} SELECT near.side, n.kind, COUNT(*) FROM near"  # noqa: S608  # nosec B608
            f" JOIN {node_table} n ON n.id = near.id GROUP BY near.side, n.kind",
            params,
        )
        for side, kind, count in cursor.fetchall():
            counts[side][kind] = count
        # Nearest first, and within one distance the kinds in turn (the first of each kind,
        # then the second of each...), so a cap still shows every kind that is there.
        cursor.execute(
            f"{cte} SELECT id, kind, ref, label, recorded_at, side, distance FROM ("  # noqa: S608  # nosec B608
            f" SELECT n.id, n.kind, n.ref, n.label, n.recorded_at, near.side, near.distance,"
            f" ROW_NUMBER() OVER (PARTITION BY near.distance, near.side, n.kind ORDER BY n.id)"
            f" AS turn FROM near JOIN {node_table} n ON n.id = near.id"
            f") ranked ORDER BY distance, turn, side, kind, id LIMIT %s",
            [*params, cap],
        )
        rows = cursor.fetchall()
    root_node = _as_node(root)
    nodes = [root_node]
    for pk, kind, ref, label, recorded_at, side, distance in rows:
        nodes.append(
            GraphNode(
                pk=pk,
                kind=kind,
                ref=ref,
                label=label,
                recorded_at=aware(recorded_at),
                side=side,
                distance=distance,
            )
        )
    nodes.extend(_replacements(nodes))
    return Subgraph(
        root=root_node,
        depth=depth,
        cap=cap,
        nodes=nodes,
        edges=_edges_between(node.pk for node in nodes),
        counts=counts,
    )


def _replacements(drawn: list[GraphNode]) -> list[GraphNode]:
    """The nodes one `wasInvalidatedBy` edge away from a node drawn and not drawn themselves
    (a correction of an entry drawn, the memory that superseded one): drawn too, so the page
    still says what replaced what, but not walked onwards (one query)."""
    at = {node.pk: node.distance for node in drawn}
    partners: dict[int, GraphNode] = {}
    for edge in invalidation_edges(at).select_related("src", "dst"):
        for near, far in ((edge.src, edge.dst), (edge.dst, edge.src)):
            if near.pk in at and far.pk not in at:
                distance = at[near.pk] + 1
                if far.pk not in partners or distance < partners[far.pk].distance:
                    partners[far.pk] = _as_node(far, side=REPLACEMENT, distance=distance)
    return sorted(partners.values(), key=lambda node: (node.distance, node.pk))


def _edges_between(pks: Iterable[int]) -> list[GraphEdge]:
    wanted = list(pks)
    return [
        GraphEdge(src=src, dst=dst, relation=relation)
        for src, dst, relation in Edge.objects.filter(
            src_id__in=wanted, dst_id__in=wanted
        ).values_list("src_id", "dst_id", "relation")
    ]


def aware(value: Any) -> datetime:
    """A timestamp from raw SQL: SQLite gives naive UTC text, PostgreSQL an aware datetime."""
    if isinstance(value, str):
        value = parse_datetime(value)
    if value is not None and timezone.is_naive(value):
        value = timezone.make_aware(value, UTC)
    return value  # type: ignore[no-any-return]
