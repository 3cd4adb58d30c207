"""Nodes by id, and one hop upstream: the small reads other apps and the writer share."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import connection
from django.db.models import Q, QuerySet

from lineage_app.choices import Relation
from lineage_app.models import Edge, Node


def node_ids(node_ids_wanted: Iterable[str]) -> dict[str, int]:
    """Map `kind:ref` ids to row ids in one query: the wanted pairs joined to the unique key.
    Raw SQL because the writers call this inside every reconcile and the ORM spent more
    compiling an OR of per-kind filters than the database spent answering it. A join, not
    `(kind, ref) IN (VALUES …)`: SQLite answered that by scanning the whole key, so every
    reconcile on the embedded default cost more as the graph grew; joined, each pair is one
    search of the key there, and an index lookup on PostgreSQL, which knows the list's size."""
    pairs = []
    for node in dict.fromkeys(node_ids_wanted):
        kind, sep, ref = node.partition(":")
        if sep and kind and ref:  # anything else names no node
            pairs.append((kind, ref))
    if not pairs:
        return {}
    rows = ", ".join(["(%s, %s)"] * len(pairs))
    with connection.cursor() as cursor:
        # Both engines name a VALUES list's columns column1, column2.
        cursor.execute(
            f"SELECT node.id, node.kind, node.ref FROM (VALUES {rows}) AS wanted "  # noqa: S608  # nosec B608 (the model's own name)
            f"JOIN {Node._meta.db_table} AS node "
            "ON node.kind = wanted.column1 AND node.ref = wanted.column2",
            [value for pair in pairs for value in pair],
        )
        return {f"{kind}:{ref}": pk for pk, kind, ref in cursor.fetchall()}


def upstream_refs(*, node: str, relation: str, kind: str) -> list[str]:
    """Refs of the `kind` nodes that `node` is related to by `relation`, one hop up (the
    effects that generated an evidence entry, say). One query."""
    node_kind, _, node_ref = node.partition(":")
    return list(
        Edge.objects.filter(
            dst__kind=node_kind, dst__ref=node_ref, src__kind=kind, relation=relation
        ).values_list("src__ref", flat=True)
    )


def nodes_of_kind(kind: str, refs: Iterable[str] | QuerySet[Any, Any]) -> list[tuple[int, str]]:
    """(row id, `kind:ref`) of the recorded `kind` nodes among `refs`, a list or a queryset of
    refs (a subquery then: one query either way)."""
    return [
        (pk, f"{kind}:{ref}")
        for pk, ref in Node.objects.filter(kind=kind, ref__in=refs).values_list("pk", "ref")
    ]


def invalidation_edges(node_pks: Iterable[int]) -> QuerySet[Edge]:
    """The `wasInvalidatedBy` edges touching these nodes, either way: one hop, never a walk
    onwards (what was built on a replacement is not the replaced node's lineage)."""
    wanted = list(node_pks)
    return Edge.objects.filter(
        Q(src_id__in=wanted) | Q(dst_id__in=wanted), relation=Relation.WAS_INVALIDATED_BY
    ).order_by("pk")


def invalidation_partners(node_pks: Iterable[int]) -> set[int]:
    """Row ids of the nodes that invalidated one of these, or that one of these invalidated
    (one query)."""
    wanted = set(node_pks)
    partners: set[int] = set()
    for src, dst in invalidation_edges(wanted).values_list("src_id", "dst_id"):
        partners |= {src, dst}
    return partners - wanted


def subgraph(node_pks: Iterable[int]) -> tuple[list[Node], list[Edge]]:
    """The nodes with these row ids and every edge between two of them (two queries)."""
    wanted = set(node_pks)
    return (
        list(Node.objects.filter(pk__in=wanted)),
        list(Edge.objects.filter(src_id__in=wanted, dst_id__in=wanted)),
    )
