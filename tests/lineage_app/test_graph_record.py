"""Recording lineage: nodes once, their ids found however they came to exist, edges once."""

from __future__ import annotations

import pytest
from django.db import connection

from lineage_app.models import Node
from lineage_app.services.graph import Link, graph_record
from tests.lineage_app.node_race import node_committed_meanwhile
from tests.lineage_app.recorded_edges import edges


@pytest.mark.django_db
def test_recording_again_adds_nothing_and_mixes_old_and_new_nodes():
    graph_record([Link("evidence:e1", "snapshot:s1", "used")], labels={"snapshot:s1": "first"})
    graph_record(
        [
            Link("evidence:e1", "snapshot:s2", "used"),
            Link("evidence:e1", "snapshot:s1", "used"),
            Link("source:case@7", "snapshot:s2", "wasAttributedTo"),
        ],
        labels={"snapshot:s1": "relabelled", "snapshot:s2": "second"},
    )

    assert Node.objects.count() == 4
    # Insert-only: a node keeps the label it was first recorded with.
    assert Node.objects.get(kind="snapshot", ref="s1").label == "first"
    assert edges() == {
        ("evidence:e1", "snapshot:s1", "used"),
        ("evidence:e1", "snapshot:s2", "used"),
        ("source:case@7", "snapshot:s2", "wasAttributedTo"),
    }


@pytest.mark.django_db(transaction=True)
def test_a_node_another_transaction_commits_meanwhile_still_gets_its_edge():
    """The writer waits on the other transaction's uncommitted node; when that commits, the
    node is neither inserted nor in the statement's snapshot, and must be read again."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has one writer at a time: no transaction commits meanwhile")
    with node_committed_meanwhile("source", "case@9"):
        graph_record([Link("source:case@9", "read:s9/status", "wasAttributedTo")])

    assert edges() == {("source:case@9", "read:s9/status", "wasAttributedTo")}
    assert Node.objects.get(kind="source", ref="case@9").label == "other"


@pytest.mark.django_db
def test_nodes_and_edges_are_one_statement_on_postgresql(django_assert_num_queries):
    """The edges join the nodes the same statement inserted or found: a write of the graph
    is one round trip however many nodes are new."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite inserts the nodes, reads their ids, then inserts the edges")
    graph_record([Link("evidence:e1", "snapshot:s1", "used")])

    with django_assert_num_queries(1):
        graph_record(
            [
                Link("evidence:e1", "snapshot:s2", "used"),
                Link("source:case@7", "snapshot:s2", "wasAttributedTo"),
            ]
        )

    assert edges() == {
        ("evidence:e1", "snapshot:s1", "used"),
        ("evidence:e1", "snapshot:s2", "used"),
        ("source:case@7", "snapshot:s2", "wasAttributedTo"),
    }
