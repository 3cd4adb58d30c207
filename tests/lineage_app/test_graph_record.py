"""Recording lineage: nodes once, their ids found however they came to exist, edges once."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections, transaction
from django.utils import timezone

from lineage_app.models import Edge, Node
from lineage_app.services.graph import Link, graph_record


def edges() -> set[tuple[str, str, str]]:
    return {
        (f"{src_kind}:{src_ref}", f"{dst_kind}:{dst_ref}", relation)
        for src_kind, src_ref, dst_kind, dst_ref, relation in Edge.objects.values_list(
            "src__kind", "src__ref", "dst__kind", "dst__ref", "relation"
        )
    }


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
    holding = threading.Event()
    release = threading.Event()

    def other_writer() -> None:
        try:
            with transaction.atomic():
                Node.objects.create(
                    kind="source", ref="case@9", label="other", recorded_at=timezone.now()
                )
                holding.set()
                release.wait(10)
        finally:
            connections.close_all()

    thread = threading.Thread(target=other_writer)
    thread.start()
    assert holding.wait(10)
    # Commit the other transaction while this one is blocked on the node's unique key.
    threading.Timer(0.5, release.set).start()
    graph_record([Link("source:case@9", "read:s9/status", "wasAttributedTo")])
    thread.join(10)

    assert edges() == {("source:case@9", "read:s9/status", "wasAttributedTo")}
    assert Node.objects.get(kind="source", ref="case@9").label == "other"
