"""Inserts for several tables in one round trip on PostgreSQL, one per table elsewhere.

Elsewhere (SQLite) the INSERTs are built without the ORM's compiler, so they are checked
against what the compiler sends for the same rows."""

from __future__ import annotations

from itertools import pairwise

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from config.insert_batch import InsertBatch, _Insert, _insert_sql, _plain_inserts
from lineage_app.models import Edge, Node
from reconcile_app.models import ClaimVerdict, DecisionReceipt, ReconcileTiming, StateRead

plain_path_only = pytest.mark.skipif(
    "connection.vendor == 'postgresql'",
    reason="PostgreSQL sends the compiler's own SQL, in one statement",
)


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


def _rows_of_every_kind(now):
    """Rows with each kind of value the gate's tables hold: text, booleans, integers, floats,
    JSON (objects, lists, nested nulls, a null column), timestamps and null timestamps."""
    return {
        StateRead: [
            StateRead(
                snapshot_id=7,
                field="collections_status",
                source_id=3,
                required=True,
                status="fresh",
                value={"a": [1, "x", None], "b": {"c": 1.5}},
                version=42,
                observed_at=now,
                valid_from=None,
                recorded_at=now,
                read_at=now,
                max_age_seconds=60,
                consistency="strong",
                evidence=["ev-1"],
                detail="",
            ),
            StateRead(
                snapshot_id=7,
                field="hardship",
                source_id=3,
                required=False,
                status="missing",
                value=None,
                version=None,
                observed_at=None,
                valid_from=None,
                recorded_at=None,
                read_at=now,
                max_age_seconds=0,
                consistency="eventual",
                evidence=[],
                detail='it\'s "quoted"',
            ),
        ],
        ClaimVerdict: [
            ClaimVerdict(
                snapshot_id=7,
                index=0,
                subject="acct-1",
                field="collections_status",
                value="collect",
                written_at=now,
                memory_class="",
                purpose="collections",
                derived_from=[],
                note="",
                memory_id="",
                verdict="superseded",
                reason="newer",
                evidence=[{"ref": "ev-1"}],
            )
        ],
        DecisionReceipt: [
            DecisionReceipt(
                decision_id="dec-1",
                snapshot_id=7,
                proposed_action="release",
                result="deny",
                permitted_actions=["hold"],
                reasons=[{"code": "x"}],
                policy_version="v1",
                issued_at=now,
            )
        ],
        ReconcileTiming: [ReconcileTiming(snapshot_id=7, received_at=now, duration_ms=3.25)],
    }


@plain_path_only
@pytest.mark.parametrize("ignore_conflicts", [False, True])
@pytest.mark.django_db
def test_the_plain_inserts_send_what_the_orms_compiler_sends(ignore_conflicts):
    for model, rows in _rows_of_every_kind(timezone.now()).items():
        expected_sql, expected_params = _insert_sql(_Insert(model, rows, ignore_conflicts))

        [(sql, params)] = _plain_inserts(_Insert(model, rows, ignore_conflicts))

        assert sql == expected_sql, model.__name__
        assert params == list(expected_params), model.__name__


@pytest.mark.django_db
def test_rows_past_the_databases_parameter_limit_are_all_written(monkeypatch):
    # SQLite's limit as Django 5.2 assumes it (the library here allows 250,000: apps.py).
    monkeypatch.setattr(connection.features, "max_query_params", 999)
    now = timezone.now()
    nodes = Node.objects.bulk_create(
        [Node(kind="k", ref=str(index), label="", recorded_at=now) for index in range(401)]
    )
    # 400 edges of 4 values each: 1,600 parameters, more than one statement may carry.
    edges = [
        Edge(src=first, dst=second, relation="used", recorded_at=now)
        for first, second in pairwise(nodes)
    ]
    batch = InsertBatch()
    batch.add(Edge, edges)

    with CaptureQueriesContext(connection) as statements:
        batch.send()

    assert len(statements) == (1 if connection.vendor == "postgresql" else 2)
    assert Edge.objects.count() == 400
    assert set(Edge.objects.values_list("src__ref", "dst__ref")) == {
        (str(index), str(index + 1)) for index in range(400)
    }
