"""Write lineage: nodes and PROV edges, inside the caller's transaction.

Callers pass plain `kind:ref` ids; nodes are created on first mention. Three statements per
call however many edges: insert missing nodes, read their ids, insert missing edges; one on
PostgreSQL, where inserting the nodes also answers their ids and the edges join them in the
same statement (two more when a node another transaction committed meanwhile must be read
again). A caller with an `InsertBatch` sends the edges with its own inserts (on PostgreSQL
the nodes are then one statement of their own).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection
from django.utils import timezone

from config.insert_batch import InsertBatch
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
    batch: InsertBatch | None = None,
) -> None:
    """Record the links (and any node first mentioned), labelling new nodes from `labels`.
    Recording a link again changes nothing: nodes and edges are insert-only. With `batch`,
    the edges go out with the caller's other inserts (the nodes cannot: edges need their
    ids)."""
    links = list(links)
    if not links:
        return
    at = at or timezone.now()
    labels = labels or {}
    wanted = {node for link in links for node in (link.src, link.dst)}
    pairs = {node: split_node_id(node) for node in wanted}
    if connection.vendor == "postgresql" and batch is None:
        _graph_write(pairs, links, labels, at)
        return
    if connection.vendor == "postgresql":
        ids = _nodes_ensure_returning_ids(pairs, labels, at)
    else:
        Node.objects.bulk_create(
            [
                Node(kind=kind, ref=ref, label=labels.get(node, "")[:300], recorded_at=at)
                for node, (kind, ref) in pairs.items()
            ],
            ignore_conflicts=True,
        )
        ids = node_ids(wanted)
    edges = _edges(links, ids, at)
    if batch is not None:
        batch.add(Edge, edges, ignore_conflicts=True)
    else:
        Edge.objects.bulk_create(edges, ignore_conflicts=True)


# Inserted nodes come back from RETURNING; the ones already there from the join, which reads
# the statement's snapshot. A node another transaction committed while this statement waited
# on its unique key is in neither (its row is newer than the snapshot), so it is read again.
_NODES_ADDED = """
WITH wanted (kind, ref, label) AS (
    SELECT * FROM unnest(%s::varchar[], %s::varchar[], %s::varchar[])
), added AS (
    INSERT INTO lineage_app_node (kind, ref, label, recorded_at)
    SELECT kind, ref, label, %s FROM wanted ORDER BY kind, ref
    ON CONFLICT (kind, ref) DO NOTHING
    RETURNING id, kind, ref
)"""
_NODES_FOUND = """
SELECT id, kind, ref FROM added
UNION ALL
SELECT node.id, node.kind, node.ref
FROM lineage_app_node AS node JOIN wanted USING (kind, ref)
"""
_NODES_ENSURE = _NODES_ADDED + _NODES_FOUND
# The same, with the edges inserted from the nodes the statement found. An edge to a node
# another transaction committed meanwhile finds no id here; the writer inserts the edges
# again once it has read every id (edges are insert-only: one already there is skipped).
_GRAPH_WRITE = (
    _NODES_ADDED  # noqa: S608  # nosec B608 - constant text, every value a parameter
    + f", nodes AS ({_NODES_FOUND})"
    + """, links (src_kind, src_ref, dst_kind, dst_ref, relation) AS (
    SELECT * FROM unnest(
        %s::varchar[], %s::varchar[], %s::varchar[], %s::varchar[], %s::varchar[]
    )
), edges AS (
    INSERT INTO lineage_app_edge (src_id, dst_id, relation, recorded_at)
    SELECT src.id, dst.id, links.relation, %s FROM links
    JOIN nodes AS src ON src.kind = links.src_kind AND src.ref = links.src_ref
    JOIN nodes AS dst ON dst.kind = links.dst_kind AND dst.ref = links.dst_ref
    ON CONFLICT DO NOTHING
)
SELECT id, kind, ref FROM nodes
"""
)


def _node_params(
    pairs: dict[str, tuple[str, str]], labels: dict[str, str], at: datetime
) -> list[Any]:
    """`_NODES_ADDED`'s parameters: kinds, refs and labels sorted by key, so concurrent
    writers take the key locks in one order; then the time."""
    nodes = sorted(pairs.items(), key=lambda item: item[1])
    return [
        [kind for _, (kind, _) in nodes],
        [ref for _, (_, ref) in nodes],
        [labels.get(node, "")[:300] for node, _ in nodes],
        at,
    ]


def _graph_write(
    pairs: dict[str, tuple[str, str]],
    links: list[Link],
    labels: dict[str, str],
    at: datetime,
) -> None:
    """Nodes and edges in one statement (PostgreSQL only)."""
    ends = [(*pairs[link.src], *pairs[link.dst], link.relation) for link in links]
    with connection.cursor() as cursor:
        cursor.execute(
            _GRAPH_WRITE,
            [
                *_node_params(pairs, labels, at),
                *([end[column] for end in ends] for column in range(5)),
                at,
            ],
        )
        found = {f"{kind}:{ref}" for _pk, kind, ref in cursor.fetchall()}
    if len(found) < len(pairs):
        Edge.objects.bulk_create(_edges(links, node_ids(pairs), at), ignore_conflicts=True)


def _edges(links: list[Link], ids: dict[str, int], at: datetime) -> list[Edge]:
    return [
        Edge(src_id=ids[link.src], dst_id=ids[link.dst], relation=link.relation, recorded_at=at)
        for link in links
    ]


def _nodes_ensure_returning_ids(
    pairs: dict[str, tuple[str, str]], labels: dict[str, str], at: datetime
) -> dict[str, int]:
    """Insert the missing nodes and map every wanted `kind:ref` to its row id, in one
    statement (PostgreSQL only)."""
    with connection.cursor() as cursor:
        cursor.execute(_NODES_ENSURE, _node_params(pairs, labels, at))
        ids = {f"{kind}:{ref}": pk for pk, kind, ref in cursor.fetchall()}
    missing = [node for node in pairs if node not in ids]
    if missing:
        ids.update(node_ids(missing))
    return ids
