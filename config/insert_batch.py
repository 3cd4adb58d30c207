"""Rows for several tables inserted in one round trip on PostgreSQL.

The gate's snapshot transaction writes a handful of small inserts (reads, verdicts, lineage
edges, the receipt) whose rows nothing reads back by id. Each statement costs a round trip
and the ORM's per-statement work, which together outweigh the rows themselves; PostgreSQL
runs several inserts as data-modifying CTEs of one statement (every CTE runs exactly once,
whether or not the main statement reads it). Elsewhere each table gets its own
`bulk_create`, as before.

The SQL of each insert is Django's own (the compiler `bulk_create` uses), so field
preparation, JSON adaptation and `ON CONFLICT DO NOTHING` are the ORM's. The rows do not get
their primary keys back: add only rows whose ids the caller does not need.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import connection, models
from django.db.models.constants import OnConflict
from django.db.models.sql import InsertQuery


@dataclass
class _Insert:
    model: type[models.Model]
    rows: list[models.Model]
    ignore_conflicts: bool


@dataclass
class InsertBatch:
    """Collect rows with `add`, write them all with `send` (inside the caller's transaction)."""

    _inserts: list[_Insert] = field(default_factory=list)

    def add(
        self,
        model: type[models.Model],
        rows: list[Any],
        *,
        ignore_conflicts: bool = False,
    ) -> None:
        if rows:
            self._inserts.append(_Insert(model, list(rows), ignore_conflicts))

    def send(self) -> None:
        inserts, self._inserts = self._inserts, []
        if not inserts:
            return
        if connection.vendor != "postgresql" or len(inserts) == 1:
            for insert in inserts:
                insert.model._default_manager.bulk_create(
                    insert.rows, ignore_conflicts=insert.ignore_conflicts
                )
            return
        statements = [_insert_sql(insert) for insert in inserts]
        *leading, (last_sql, last_params) = statements
        sql = "WITH " + ", ".join(
            f"insert_{index} AS ({statement})" for index, (statement, _) in enumerate(leading)
        )
        params: list[Any] = [param for _, statement_params in leading for param in statement_params]
        with connection.cursor() as cursor:
            cursor.execute(f"{sql} {last_sql}", [*params, *last_params])


def _insert_sql(insert: _Insert) -> tuple[str, tuple[Any, ...]]:
    """The one INSERT `bulk_create` would send for these rows (no RETURNING)."""
    opts = insert.model._meta
    manager = insert.model._default_manager
    # What bulk_create does first: primary-key defaults and related objects' ids.
    manager.get_queryset()._prepare_for_bulk_create(insert.rows)  # type: ignore[attr-defined]
    fields = [
        model_field
        for model_field in opts.concrete_fields
        if not model_field.generated and not isinstance(model_field, models.AutoField)
    ]
    query = InsertQuery(
        insert.model, on_conflict=OnConflict.IGNORE if insert.ignore_conflicts else None
    )
    query.insert_values(fields, insert.rows)
    [(sql, params)] = query.get_compiler(connection=connection).as_sql()
    return sql, tuple(params)
