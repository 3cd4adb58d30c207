"""`bench lineage` on the test database: the recursive CTE reaches exactly what networkx does.

The generator's small graph (5,000 edges) has the product's shape: snapshots use several reads
and evidence entries, receipts feed later snapshots, memories derive from snapshots, evidence
and earlier memories, so most nodes are reachable along many paths. Equality with
`nx.descendants` / `nx.ancestors` on such a DAG shows UNION dedupes without losing nodes.
"""

from __future__ import annotations

import io
from collections import Counter

import networkx as nx
import pytest
from django.db import IntegrityError, connection, transaction

from lineage_app import bench
from lineage_app.models import Edge, Node
from lineage_app.selectors.reach import reach

EDGES = 5_000


@pytest.fixture
def generated(db):
    return bench.generate(EDGES)


def _by_kind(generated: bench.Generated, pks: set[int]) -> dict[str, int]:
    return dict(Counter(generated.kind(pk) for pk in pks))


def _paths(graph: nx.DiGraph, root: int, reached: set[int]) -> int:
    """Number of distinct paths from root to the reached nodes (what UNION ALL would walk)."""
    sub = graph.subgraph(reached | {root})
    paths = dict.fromkeys(sub, 0)
    paths[root] = 1
    for node in nx.topological_sort(sub):
        for child in sub.successors(node):
            paths[child] += paths[node]
    return sum(paths.values()) - 1


def _roots(generated: bench.Generated) -> list[int]:
    """The two built-in roots, the source version reaching furthest, one node of each kind."""
    graph = generated.graph
    sources = [pk for pk in graph if generated.kind(pk) == "source"]
    widest = max(sources, key=lambda pk: (len(nx.descendants(graph, pk)), -pk))
    firsts: dict[str, int] = {}
    for pk in sorted(graph):
        if graph.out_degree(pk):
            firsts.setdefault(generated.kind(pk), pk)
    return [generated.big.pk, generated.small.pk, widest, *firsts.values()]


def test_generator_writes_exactly_the_requested_dag(generated):
    assert Edge.objects.count() == EDGES == generated.edges == generated.graph.number_of_edges()
    assert Node.objects.count() == generated.nodes == generated.graph.number_of_nodes()
    assert nx.is_directed_acyclic_graph(generated.graph)
    kinds = Counter(Node.objects.values_list("kind", flat=True))
    assert set(kinds) == set(bench.KINDS)
    assert kinds["read"] > kinds["snapshot"] > kinds["memory"] > 0


def test_generator_is_deterministic(generated):
    again = bench.LineageGenerator(EDGES, bench.SEED, 1, lambda step: "t")
    edges = [(src, dst) for _, rows in again.chunks() for src, dst, _, _ in rows]
    assert set(edges) == set(generated.graph.edges)


def test_bulk_load_restores_indexes_and_constraints(generated):
    edge = Edge.objects.order_by("pk").first()
    with pytest.raises(IntegrityError), transaction.atomic():
        Edge.objects.create(
            src_id=edge.src_id,
            dst_id=edge.dst_id,
            relation=edge.relation,
            recorded_at=edge.recorded_at,
        )
    node = Node.objects.order_by("pk").first()
    with pytest.raises(IntegrityError), transaction.atomic():
        Node.objects.create(kind=node.kind, ref=node.ref, recorded_at=node.recorded_at)
    # Ids were given explicitly; the next ORM insert still gets a fresh one.
    fresh = Node.objects.create(kind="memory", ref="after-bench", recorded_at=node.recorded_at)
    assert fresh.pk > max(generated.graph)
    with connection.cursor() as cursor:
        found = {
            name: info
            for table in (Edge._meta.db_table, Node._meta.db_table)
            for name, info in connection.introspection.get_constraints(cursor, table).items()
        }
    # The edges' (dst, src) index; the unique constraints also index (src, …) and (kind, …).
    assert found["lineage_app_dst_id_2ffce3_idx"]["index"]
    assert found["lineage_app_dst_id_2ffce3_idx"]["columns"] == ["dst_id", "src_id"]
    assert found["edge_unique"]["unique"]
    assert found["node_kind_ref"]["unique"]


def test_cte_descendants_equal_networkx_on_shared_paths(generated):
    graph = generated.graph
    for pk in _roots(generated):
        expected = nx.descendants(graph, pk)
        result = reach([pk], [f"root {pk}"], limit=len(expected) + 10)
        assert result.total == len(expected), pk
        assert result.counts == _by_kind(generated, expected), pk
        assert {node["pk"] for node in result.nodes} == expected, pk
    big = nx.descendants(graph, generated.big.pk)
    # Far more paths than nodes: UNION ALL would walk every one of them.
    assert _paths(graph, generated.big.pk, big) > 3 * len(big)


def test_cte_ancestors_equal_networkx(generated):
    graph = generated.graph
    deepest = [
        pk
        for pk in sorted(graph)
        if generated.kind(pk) in ("memory", "effect") and graph.in_degree(pk)
    ][-3:]
    for pk in deepest:
        expected = nx.ancestors(graph, pk)
        result = reach([pk], [f"leaf {pk}"], direction="ancestors", limit=len(expected) + 10)
        assert {node["pk"] for node in result.nodes} == expected, pk
        assert result.counts == _by_kind(generated, expected), pk


def test_first_page_agrees_with_networkx(generated):
    graph = generated.graph
    for root in (generated.big, generated.small):
        expected = nx.descendants(graph, root.pk)
        page = sorted(expected, key=lambda pk: (generated.kind(pk), pk))[:25]
        result = reach([root.pk], [root.node], limit=25)
        assert [node["pk"] for node in result.nodes] == page


def test_built_in_roots_scale_with_the_edge_count(generated):
    graph = generated.graph
    big = len(nx.descendants(graph, generated.big.pk))
    small = len(nx.descendants(graph, generated.small.pk))
    # ~20% of the edge count (200,000 at 1,000,000 edges); the small root stays small.
    assert 0.15 * EDGES < big < 0.25 * EDGES
    assert 0 < small < big / 10


@pytest.mark.django_db
def test_run_prints_the_table_with_identical_counts():
    out = io.StringIO()
    bench.run(out, 1, edges=2_000)
    text = out.getvalue()
    assert "MISMATCH" not in text
    rows = [line for line in text.splitlines() if line.startswith(("sqlite", "postgresql"))]
    assert len(rows) == 2
    assert all(line.endswith("yes") for line in rows)
    assert "reducer:hardship@3" in rows[0]
