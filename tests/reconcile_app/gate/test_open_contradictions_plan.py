"""A reconcile that sees a disagreement again joins its open row (services/snapshots.py,
`_open_rows_touch`, the ORM path SQLite takes): found by its signature's index, not by
walking every open contradiction, which an incident holds by the thousand."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reconcile_app.models import Contradiction
from tests.reconcile_app.gate.test_snapshot_statement import PICK, _pallet_moved

pytestmark = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="PostgreSQL writes the snapshot in one statement"
)


@pytest.mark.django_db
def test_the_open_row_is_found_by_its_signature(estate, agent, now):
    _pallet_moved(now)
    assert agent.post("/api/v1/reconcile", PICK).status_code == 201
    with CaptureQueriesContext(connection) as captured:
        joined = agent.post("/api/v1/reconcile", PICK)

    assert joined.status_code == 201, joined.content
    [stored] = Contradiction.objects.all()
    assert stored.last_seen_at > stored.detected_at  # joined, not opened again
    [touch] = [q["sql"] for q in captured.captured_queries if q["sql"].startswith("UPDATE")]
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN QUERY PLAN " + touch)
        plan = " | ".join(row[-1] for row in cursor.fetchall())
    assert "USING INDEX contradiction_signature " in plan, plan
