"""The tables every reconcile writes carry one index per lookup (migrations reconcile_app 0026,
lineage_app 0002): each index is a write per row, so none may repeat what another gives."""

from __future__ import annotations

import pytest
from django.db import connection, models

from lineage_app.models import Edge, Node
from reconcile_app.models import (
    ClaimVerdict,
    Contradiction,
    DecisionReceipt,
    DecisionSnapshot,
    StateRead,
)

WRITTEN_PER_RECONCILE: list[type[models.Model]] = [
    DecisionSnapshot,
    StateRead,
    ClaimVerdict,
    DecisionReceipt,
    Contradiction,
    Node,
    Edge,
]


def _indexes(table: str) -> dict[str, list[str]]:
    with connection.cursor() as cursor:
        found = connection.introspection.get_constraints(cursor, table)
    return {
        name: info["columns"] for name, info in found.items() if info["index"] or info["unique"]
    }


@pytest.mark.django_db
@pytest.mark.parametrize("model", WRITTEN_PER_RECONCILE, ids=lambda model: model.__name__)
def test_no_index_repeats_the_leading_columns_of_another(model):
    indexes = _indexes(model._meta.db_table)
    repeated = {
        name: (columns, other)
        for name, columns in indexes.items()
        for other_name, other in indexes.items()
        if other_name != name and other[: len(columns)] == columns
    }
    assert not repeated, repeated


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's LIKE-prefix twins")
def test_no_text_column_has_a_pattern_ops_twin():
    tables = [model._meta.db_table for model in WRITTEN_PER_RECONCILE]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = ANY(%s)"
            " AND indexdef LIKE '%%pattern_ops%%'",
            [tables],
        )
        twins = [name for (name,) in cursor.fetchall()]
    assert twins == []
