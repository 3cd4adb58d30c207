"""Orders read on every page load come from an index, not from reading or sorting the table."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection, transaction
from django.db.models import QuerySet

from reconcile_app.models import AuditEvent
from reconcile_app.selectors.ledger import memories_visible_to

pytestmark = pytest.mark.django_db


def _plan(queryset: QuerySet[Any]) -> str:
    sql, params = queryset.query.sql_with_params()
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # A test's tables are tiny, where a scan (or a scan and a sort) is cheapest: ask
            # which index could serve the order. Without `enable_sort` off, a plan sorting
            # a primary-key scan could win on the statistics other tests left behind.
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute("SET LOCAL enable_sort = off")
            cursor.execute(f"EXPLAIN {sql}", params)
        else:
            cursor.execute(f"EXPLAIN QUERY PLAN {sql}", params)
        return "\n".join(str(row) for row in cursor.fetchall())


def test_a_kinds_timeline_reads_the_kind_and_time_index():
    # The quarantine page's timeline on a 300k-row audit table: a parallel seq scan of all
    # of it, 197 ms on every load, when no row was of that kind.
    newest = AuditEvent.objects.filter(object_kind="quarantine").order_by("-at", "-id")[:21]
    assert "audit_kind_at" in _plan(newest)


def test_the_memory_list_reads_its_order_from_an_index(operator):
    # GET /api/v1/memories on 100k memories: a top-N sort of every row, 365 ms for page 1.
    page = memories_visible_to(operator.user).order_by("-recorded_at", "-id")[:50]
    assert "memory_recorded_at" in _plan(page)
