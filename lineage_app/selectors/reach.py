"""Descendants and ancestors as recursive CTEs (SQLite and PostgreSQL).

UNION, not UNION ALL: on a DAG, UNION ALL revisits every path and explodes; UNION keeps
each node once, so the cost follows the number of nodes reached, not paths.

The SQL is assembled from table and column names of our own models and `%s` placeholders
only; every value is a bound parameter (hence the S608 exemptions).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection

from lineage_app.choices import Relation
from lineage_app.models import Edge, Node
from lineage_app.selectors.nodes import node_ids as lookup

MAX_DEPTH = 64
INVALIDATION = Relation.WAS_INVALIDATED_BY.value


@dataclass(frozen=True)
class Reach:
    roots: list[str]
    counts: dict[str, int]
    total: int
    nodes: list[dict[str, Any]]


def _cte(
    direction: str,
    root_ids: list[int],
    depth: int | None,
    as_of: datetime | None,
) -> tuple[str, list[Any]]:
    """The WITH RECURSIVE clause defining `reach(id)`, and its parameters in order.

    An invalidation (`wasInvalidatedBy`: an entry revoked or superseded by a later one) is
    not derivation: the later entry was not made from the one it replaces, and what was
    built on it was built on the correction. Walked, it carried a correction's blast radius,
    and its taint, onto every decision that used the corrected value. The graph's pages still
    draw the edge, its far end beside what they count (graph.py), and a PROV export adds the
    entries across it, one hop and no further (`nodes.invalidation_partners`): the document
    says what invalidated what.
    """
    edge = Edge._meta.db_table
    start, follow = ("src_id", "dst_id") if direction == "descendants" else ("dst_id", "src_id")
    placeholders = ", ".join(["%s"] * len(root_ids))
    edge_filter = " AND e.recorded_at <= %s" if as_of else ""
    edge_params: list[Any] = [as_of] if as_of else []
    edge_filter += " AND e.relation <> %s"
    edge_params.append(INVALIDATION)
    if depth is None:
        sql = (
            f"WITH RECURSIVE reach(id) AS ("  # noqa: S608  # nosec B608
            f" SELECT e.{follow} FROM {edge} e WHERE e.{start} IN ({placeholders}){edge_filter}"
            f" UNION"
            f" SELECT e.{follow} FROM {edge} e JOIN reach r ON e.{start} = r.id"
            f" WHERE 1 = 1{edge_filter}"
            f")"
        )
        return sql, [*root_ids, *edge_params, *edge_params]
    # With a depth bound the depth column is part of each row, so UNION dedupes per
    # (node, depth); the bound keeps that finite.
    sql = (
        f"WITH RECURSIVE walk(id, depth) AS ("  # noqa: S608  # nosec B608
        f" SELECT e.{follow}, 1 FROM {edge} e WHERE e.{start} IN ({placeholders}){edge_filter}"
        f" UNION"
        f" SELECT e.{follow}, w.depth + 1 FROM {edge} e JOIN walk w ON e.{start} = w.id"
        f" WHERE w.depth < %s{edge_filter}"
        f"), reach(id) AS (SELECT DISTINCT id FROM walk)"
    )
    return sql, [*root_ids, *edge_params, depth, *edge_params]


def reach(
    root_ids: list[int],
    roots: list[str],
    *,
    direction: str = "descendants",
    depth: int | None = None,
    as_of: datetime | None = None,
    kinds: list[str] | None = None,
    limit: int = 100,
    offset: int = 0,
) -> Reach:
    """Counts by kind and one page of the nodes reached, with the walk run once.

    One statement returns both the counts and the page's ids: the recursive CTE is
    evaluated once and materialised. Each reached node's kind is an index lookup rather
    than a join, because the planner sizes a join from the CTE's (wildly high) row estimate
    and answers it with a full scan of the node table (measured in `bench lineage`; the same
    estimates are why PostgreSQL connections run with JIT off, see settings).
    """
    if not root_ids:
        return Reach(roots=roots, counts={}, total=0, nodes=[])
    node = Node._meta.db_table
    cte, params = _cte(direction, root_ids, depth, as_of)
    not_root = ", ".join(["%s"] * len(root_ids))
    kind_filter = ""
    page_params: list[Any] = []
    if kinds:
        kind_filter = f" WHERE kind IN ({', '.join(['%s'] * len(kinds))})"
        page_params = list(kinds)
    sql = (
        f"{cte}, hit(id, kind) AS MATERIALIZED (SELECT r.id,"  # noqa: S608  # nosec B608
        f" (SELECT n.kind FROM {node} n WHERE n.id = r.id)"
        f" FROM reach r WHERE r.id NOT IN ({not_root}))"
        f" SELECT 0, kind, COUNT(*) FROM hit GROUP BY kind"
        f" UNION ALL SELECT 1, kind, id FROM"
        f" (SELECT id, kind FROM hit{kind_filter} ORDER BY kind, id LIMIT %s OFFSET %s) page"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, *root_ids, *page_params, limit, offset])
        rows = cursor.fetchall()
    counts = {kind: value for part, kind, value in sorted(rows) if part == 0}
    page_ids = [pk for part, _, pk in sorted(rows) if part == 1]
    details = (
        {
            pk: (kind, ref, label, recorded_at)
            for pk, kind, ref, label, recorded_at in Node.objects.filter(
                pk__in=page_ids
            ).values_list("pk", "kind", "ref", "label", "recorded_at")
        }
        if page_ids
        else {}
    )
    nodes = [
        {
            "pk": pk,
            "node": f"{details[pk][0]}:{details[pk][1]}",
            "kind": details[pk][0],
            "ref": details[pk][1],
            "label": details[pk][2],
            "recorded_at": details[pk][3],
        }
        for pk in page_ids
    ]
    total = sum(counts[k] for k in kinds if k in counts) if kinds else sum(counts.values())
    return Reach(roots=roots, counts=counts, total=total, nodes=nodes)


def resolve_roots(node_ids: list[str]) -> tuple[list[int], list[str]]:
    """Row ids of the given `kind:ref` ids that exist, in one query."""
    found = lookup(node_ids)
    return [found[node] for node in node_ids if node in found], [n for n in node_ids if n in found]


def ancestor_refs(nodes: list[str], kind: str) -> list[str]:
    """Refs of every `kind` node among `nodes` or that they derive from, however far up
    (derivation only: an invalidation is not followed, as in `_cte`). Two queries: the nodes'
    rows, the walk. Each reached node's kind is an index lookup, not a join, for the reason
    `reach` gives."""
    prefix = f"{kind}:"
    found = {node.removeprefix(prefix) for node in nodes if node.startswith(prefix)}
    root_ids, _ = resolve_roots(nodes)
    if not root_ids:
        return sorted(found)
    cte, params = _cte("ancestors", root_ids, None, None)
    node_table = Node._meta.db_table
    sql = (
        f"{cte} SELECT ref FROM (SELECT (SELECT n.ref FROM {node_table} n"  # noqa: S608  # nosec B608
        f" WHERE n.id = r.id AND n.kind = %s) AS ref FROM reach r) found"
        f" WHERE ref IS NOT NULL"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, kind])
        found.update(ref for (ref,) in cursor.fetchall())
    return sorted(found)
