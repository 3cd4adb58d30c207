"""`node_ids` (lineage_app/selectors/nodes.py): ids by `kind:ref`, each pair found through the
unique key. Every reconcile on the embedded default calls it; written as
`(kind, ref) IN (VALUES …)` it scanned SQLite's whole key, so a reconcile cost more as the
graph grew."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from lineage_app.models import Node
from lineage_app.selectors.nodes import node_ids


@pytest.fixture
def graph(db):
    now = timezone.now()
    Node.objects.bulk_create(
        Node(kind=("read", "evidence")[index % 2], ref=f"ref-{index}", recorded_at=now)
        for index in range(3000)
    )


def test_known_pairs_map_to_their_ids_and_the_rest_to_nothing(graph):
    expected = {f"{node.kind}:{node.ref}": node.pk for node in Node.objects.filter(ref="ref-7")}
    found = node_ids(["evidence:ref-7", "evidence:ref-7", "read:ref-7", "nokind", ":x", "y:"])
    assert found == expected
    assert list(found) == ["evidence:ref-7"]


def test_each_pair_is_looked_up_by_the_key_not_a_scan(graph):
    with CaptureQueriesContext(connection) as captured:
        node_ids(["read:ref-2", "evidence:ref-3", "read:ref-4"])
    [query] = captured.captured_queries
    explain = "EXPLAIN QUERY PLAN " if connection.vendor == "sqlite" else "EXPLAIN "
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # Planned as a production table is: with statistics (a table never analysed
            # looks a few rows long, which a scan answers as well as the key).
            cursor.execute(f"ANALYZE {Node._meta.db_table}")
        cursor.execute(explain + query["sql"])
        plan = " | ".join(str(row[-1]) for row in cursor.fetchall())
    table = Node._meta.db_table
    if connection.vendor == "sqlite":
        assert "SEARCH node USING" in plan, plan
        assert "SCAN node" not in plan and f"SCAN {table}" not in plan, plan
    else:
        assert "Index" in plan and "Seq Scan" not in plan, plan
