"""Inserts for several tables in one round trip on PostgreSQL, one per table elsewhere."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from config.insert_batch import InsertBatch
from lineage_app.models import Edge, Node


@pytest.mark.django_db
def test_a_batch_writes_every_table_and_skips_conflicts_it_was_told_to():
    now = timezone.now()
    first, second, third = Node.objects.bulk_create(
        [Node(kind="k", ref=ref, label=ref, recorded_at=now) for ref in ("a", "b", "c")]
    )
    Edge.objects.create(src=first, dst=second, relation="used", recorded_at=now)
    batch = InsertBatch()
    batch.add(
        Edge,
        [
            Edge(src=first, dst=second, relation="used", recorded_at=now),  # already there
            Edge(src=second, dst=third, relation="used", recorded_at=now),
        ],
        ignore_conflicts=True,
    )
    batch.add(Node, [])  # nothing to write: no statement
    batch.add(Node, [Node(kind="k", ref="d", label="{\"json\": 'quotes'}", recorded_at=now)])

    with CaptureQueriesContext(connection) as statements:
        batch.send()

    assert len(statements) == (1 if connection.vendor == "postgresql" else 2)
    assert set(Edge.objects.values_list("src__ref", "dst__ref")) == {("a", "b"), ("b", "c")}
    assert Node.objects.get(ref="d").label == "{\"json\": 'quotes'}"
    # Sent once: a second send writes nothing again.
    batch.send()
    assert Edge.objects.count() == 2
