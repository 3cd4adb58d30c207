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

from lineage_app.models import Edge, Node

MAX_DEPTH = 64


@dataclass(frozen=True)
class Reach:
    roots: list[str]
    counts: dict[str, int]
    total: int
    nodes: list[dict[str, Any]]


def _cte(
    direction: str, root_ids: list[int], depth: int | None, as_of: datetime | None
) -> tuple[str, list[Any]]:
    """The WITH RECURSIVE clause defining `reach(id)`, and its parameters in order."""
    edge = Edge._meta.db_table
    start, follow = ("src_id", "dst_id") if direction == "descendants" else ("dst_id", "src_id")
    placeholders = ", ".join(["%s"] * len(root_ids))
    time_filter = " AND e.recorded_at <= %s" if as_of else ""
    at: list[Any] = [as_of] if as_of else []
    if depth is None:
        sql = (
            f"WITH RECURSIVE reach(id) AS ("  # noqa: S608  # nosec B608
            f" SELECT e.{follow} FROM {edge} e WHERE e.{start} IN ({placeholders}){time_filter}"
            f" UNION"
            f" SELECT e.{follow} FROM {edge} e JOIN reach r ON e.{start} = r.id"
            f" WHERE 1 = 1{time_filter}"
            f")"
        )
        return sql, [*root_ids, *at, *at]
    # With a depth bound the depth column is part of each row, so UNION dedupes per
    # (node, depth); the bound keeps that finite.
    sql = (
        f"WITH RECURSIVE walk(id, depth) AS ("  # noqa: S608  # nosec B608
        f" SELECT e.{follow}, 1 FROM {edge} e WHERE e.{start} IN ({placeholders}){time_filter}"
        f" UNION"
        f" SELECT e.{follow}, w.depth + 1 FROM {edge} e JOIN walk w ON e.{start} = w.id"
        f" WHERE w.depth < %s{time_filter}"
        f"), reach(id) AS (SELECT DISTINCT id FROM walk)"
    )
    return sql, [*root_ids, *at, depth, *at]


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
    if not root_ids:
        return Reach(roots=roots, counts={}, total=0, nodes=[])
    node = Node._meta.db_table
    cte, params = _cte(direction, root_ids, depth, as_of)
    exclude_roots = f"n.id NOT IN ({', '.join(['%s'] * len(root_ids))})"
    with connection.cursor() as cursor:
        cursor.execute(
            f"{cte} SELECT n.kind, COUNT(*) FROM reach r JOIN {node} n ON n.id = r.id"  # noqa: S608  # nosec B608
            f" WHERE {exclude_roots} GROUP BY n.kind ORDER BY n.kind",
            params + list(root_ids),
        )
        counts = {kind: count for kind, count in cursor.fetchall()}
        kind_filter = ""
        page_params = params + list(root_ids)
        if kinds:
            kind_filter = f" AND n.kind IN ({', '.join(['%s'] * len(kinds))})"
            page_params += list(kinds)
        cursor.execute(
            f"{cte} SELECT n.id, n.kind, n.ref, n.label, n.recorded_at FROM reach r"  # noqa: S608  # nosec B608
            f" JOIN {node} n ON n.id = r.id WHERE {exclude_roots}{kind_filter}"
            f" ORDER BY n.kind, n.id LIMIT %s OFFSET %s",
            [*page_params, limit, offset],
        )
        nodes = [
            {
                "pk": pk,
                "node": f"{kind}:{ref}",
                "kind": kind,
                "ref": ref,
                "label": label,
                "recorded_at": recorded_at,
            }
            for pk, kind, ref, label, recorded_at in cursor.fetchall()
        ]
    total = sum(counts[k] for k in kinds if k in counts) if kinds else sum(counts.values())
    return Reach(roots=roots, counts=counts, total=total, nodes=nodes)


def resolve_roots(node_ids: list[str]) -> tuple[list[int], list[str]]:
    """Row ids of the given `kind:ref` ids that exist, in one query."""
    from lineage_app.services.graph import node_ids as lookup

    found = lookup(node_ids)
    return [found[node] for node in node_ids if node in found], [n for n in node_ids if n in found]
