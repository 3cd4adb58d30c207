"""The graph's selector and figure: bounded neighbourhoods, layers by kind, readable labels."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lineage_app.charts import (
    KIND_STYLES,
    MAX_ARROWS,
    layered_positions,
    lineage_graph_figure,
    short_label,
)
from lineage_app.choices import Relation
from lineage_app.models import Node
from lineage_app.selectors.graph import (
    DOWNSTREAM,
    ROOT,
    UPSTREAM,
    GraphEdge,
    GraphNode,
    Subgraph,
    node_candidates,
    subgraph,
)
from lineage_app.services.graph import Link, graph_record

AT = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)


def node(pk: int, kind: str, ref: str, side: str = DOWNSTREAM, distance: int = 1, label: str = ""):
    return GraphNode(pk, kind, ref, label, AT, side, distance)


def small_graph() -> Subgraph:
    nodes = [
        node(1, "snapshot", "snap_0123456789abcdef", ROOT, 0, "collections account-17: allow"),
        node(2, "source", "case-service@42", UPSTREAM, 2),
        node(3, "read", "snap_0123456789abcdef/collections_status", UPSTREAM, 1),
        node(4, "evidence", "ev-collect", UPSTREAM, 1),
        node(5, "decision", "dec_0123456789abcdef"),
        node(6, "effect", "l-1", distance=2),
        node(7, "evidence", "ev-receipt", distance=3, label="<b>receipt</b> & more"),
        node(8, "memory", "mem-1", distance=1),
    ]
    edges = [
        GraphEdge(2, 3, Relation.WAS_ATTRIBUTED_TO),
        GraphEdge(3, 1, Relation.USED),
        GraphEdge(4, 1, Relation.USED),
        GraphEdge(1, 5, Relation.WAS_DERIVED_FROM),
        GraphEdge(5, 6, Relation.WAS_DERIVED_FROM),
        GraphEdge(6, 7, Relation.WAS_GENERATED_BY),
        GraphEdge(1, 8, Relation.WAS_DERIVED_FROM),
    ]
    counts = {UPSTREAM: {"source": 1, "read": 1, "evidence": 1}, DOWNSTREAM: {"decision": 1}}
    return Subgraph(root=nodes[0], depth=3, cap=120, nodes=nodes, edges=edges, counts=counts)


def test_layers_follow_the_order_things_happen():
    x = {pk: position[0] for pk, position in layered_positions(small_graph()).items()}
    # source → read → evidence → snapshot → decision → effect → receipt → memory
    assert [x[pk] for pk in (2, 3, 4, 1, 5, 6, 7, 8)] == [0, 1, 2, 3, 4, 5, 6, 7]


def test_evidence_an_effect_generated_is_drawn_as_a_receipt():
    figure = lineage_graph_figure(small_graph(), {})
    names = [trace.name for trace in figure.data]
    assert "receipt" in names and "evidence" in names
    receipt = next(trace for trace in figure.data if trace.name == "receipt")
    assert receipt.customdata[0][1] == "evidence"  # still evidence in the hover


def test_each_kind_keeps_its_colour_and_the_root_stands_out():
    figure = lineage_graph_figure(small_graph(), {})
    for trace in figure.data:
        if trace.name in KIND_STYLES:
            assert trace.marker.color == KIND_STYLES[trace.name].colour
    snapshot = next(trace for trace in figure.data if trace.name == "snapshot")
    assert snapshot.marker.size == (22,)
    assert snapshot.marker.line.width == (3,)


def test_hover_and_click_data_and_escaped_labels():
    targets = {"snapshot:snap_0123456789abcdef": "/snapshots/snap_0123456789abcdef/"}
    figure = lineage_graph_figure(small_graph(), targets)
    snapshot = next(trace for trace in figure.data if trace.name == "snapshot")
    url, kind, ref, label, recorded, where = snapshot.customdata[0]
    assert (url, kind, ref) == (targets["snapshot:snap_0123456789abcdef"], "snapshot", ref)
    assert label == "collections account-17: allow"
    assert recorded == "2026-03-04 05:06:07 UTC" and where == "this node"
    receipt = next(trace for trace in figure.data if trace.name == "receipt")
    assert receipt.customdata[0][3] == "&lt;b&gt;receipt&lt;/b&gt; &amp; more"
    assert receipt.customdata[0][5] == "downstream, 3 hops"
    assert "%{customdata[1]}" in snapshot.hovertemplate


def test_labels_are_short():
    graph = small_graph()
    labels = {n.kind: short_label(n) for n in graph.nodes}
    assert labels["snapshot"] == "snap_012345…"
    assert labels["decision"] == "dec_012345…"
    assert labels["read"] == "collections_status"
    assert labels["source"] == "case-service@42"
    assert short_label(node(9, "effect", "k" * 40)) == "k" * 19 + "…"


def test_edges_are_arrows_until_there_are_too_many():
    figure = lineage_graph_figure(small_graph(), {})
    arrows = [note for note in figure.layout.annotations if note.showarrow]
    assert len(arrows) == len(small_graph().edges)
    many = small_graph()
    many.edges.extend(GraphEdge(1, 8, Relation.USED) for _ in range(MAX_ARROWS))
    crowded = lineage_graph_figure(many, {})
    assert not [note for note in crowded.layout.annotations if note.showarrow]
    assert crowded.data[0].name == "edges"


def test_the_figure_carries_no_theme_weight():
    """No default theme: the JSON on the page is the graph, not Plotly's template."""
    payload = lineage_graph_figure(small_graph(), {}).to_plotly_json()
    assert payload["layout"]["template"] == {"data": {"scatter": [{"type": "scatter"}]}}


# --- The selector ---------------------------------------------------------------------------


@pytest.fixture
def diamond(db):
    """a → b → d, a → c → d, d → e → f: a small DAG with two paths to d."""
    graph_record(
        [
            Link("source:a@1", "read:b", Relation.WAS_ATTRIBUTED_TO),
            Link("source:a@1", "evidence:c", Relation.WAS_DERIVED_FROM),
            Link("read:b", "snapshot:d", Relation.USED),
            Link("evidence:c", "snapshot:d", Relation.USED),
            Link("snapshot:d", "decision:e", Relation.WAS_DERIVED_FROM),
            Link("decision:e", "effect:f", Relation.WAS_DERIVED_FROM),
        ]
    )
    return {node.node_id: node for node in Node.objects.all()}


def test_subgraph_walks_both_ways_within_depth(diamond, django_assert_num_queries):
    with django_assert_num_queries(4):  # counts, nodes, across invalidations, edges
        graph = subgraph(root=diamond["snapshot:d"], depth=1)
    drawn = {(n.node_id, n.side, n.distance) for n in graph.nodes}
    assert drawn == {
        ("snapshot:d", ROOT, 0),
        ("read:b", UPSTREAM, 1),
        ("evidence:c", UPSTREAM, 1),
        ("decision:e", DOWNSTREAM, 1),
    }
    assert graph.counts == {UPSTREAM: {"read": 1, "evidence": 1}, DOWNSTREAM: {"decision": 1}}
    assert len(graph.edges) == 3
    deeper = subgraph(root=diamond["snapshot:d"], depth=2)
    by_id = {n.node_id: n for n in deeper.nodes}
    assert by_id["source:a@1"].distance == 2 and by_id["effect:f"].distance == 2
    assert deeper.total == 5 and deeper.not_drawn == 0
    assert deeper.count_rows()[0] == ("source", 1, 0)  # in the order things happen


def test_subgraph_counts_a_node_once_at_its_nearest(diamond):
    graph = subgraph(root=diamond["source:a@1"], depth=6)
    assert [n.node_id for n in graph.nodes].count("snapshot:d") == 1
    assert next(n for n in graph.nodes if n.node_id == "snapshot:d").distance == 2


def test_subgraph_cap_keeps_the_nearest(diamond):
    graph = subgraph(root=diamond["source:a@1"], depth=6, cap=2)
    assert {n.node_id for n in graph.nodes} == {"source:a@1", "read:b", "evidence:c"}
    assert graph.not_drawn == 3


def test_node_candidates(diamond):
    assert [n.node_id for n in node_candidates("snapshot:d")] == ["snapshot:d"]
    assert [n.node_id for n in node_candidates("a@1")] == ["source:a@1"]
    assert node_candidates("  ") == [] and node_candidates("zzz") == []
