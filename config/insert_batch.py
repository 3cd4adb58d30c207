"""Rows for several tables inserted in one round trip on PostgreSQL.

The gate's snapshot transaction writes a handful of small inserts (reads, verdicts, lineage
edges, the receipt) whose rows nothing reads back by id. Each statement costs a round trip
and the ORM's per-statement work, which together outweigh the rows themselves; PostgreSQL
runs several inserts as data-modifying CTEs of one statement (every CTE runs exactly once,
whether or not the main statement reads it).

Elsewhere (SQLite, the embedded default) each table gets one INSERT, or one per batch of
rows the database's parameter limit allows. Its text is built once per model and row count,
not by the ORM's compiler, which cost more than the rows: on the gate's path, about a tenth
of a reconcile's CPU. Each value is still prepared by its field as `bulk_create` prepares
it (`pre_save`, then `get_db_prep_save`), so what is stored is the same.

On PostgreSQL the SQL of each insert is Django's own (the compiler `bulk_create` uses), so
field preparation, JSON adaptation and `ON CONFLICT DO NOTHING` are the ORM's. On either
engine the rows do not get their primary keys back: add only rows whose ids the caller does
not need, holding plain values (not expressions).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
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
        if connection.vendor != "postgresql":
            with connection.cursor() as cursor:
                for insert in inserts:
                    for sql, values in _plain_inserts(insert):
                        cursor.execute(sql, values)
            return
        if len(inserts) == 1:
            [insert] = inserts
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
    _prepare_for_bulk_create(insert)
    fields = inserted_fields(insert.model)
    query = InsertQuery(
        insert.model, on_conflict=OnConflict.IGNORE if insert.ignore_conflicts else None
    )
    query.insert_values(list(fields), insert.rows)
    [(sql, params)] = query.get_compiler(connection=connection).as_sql()
    return sql, tuple(params)


def _prepare_for_bulk_create(insert: _Insert) -> None:
    """What bulk_create does first: primary-key defaults and related objects' ids."""
    queryset = insert.model._default_manager.get_queryset()
    queryset._prepare_for_bulk_create(insert.rows)  # type: ignore[attr-defined]


@cache
def inserted_fields(model: type[models.Model]) -> tuple[models.Field, ...]:
    """The columns an insert of `model` names: every concrete field but the key and
    generated ones."""
    fields = tuple(
        model_field
        for model_field in model._meta.concrete_fields
        if not model_field.generated and not isinstance(model_field, models.AutoField)
    )
    # The plain path sends every value as a parameter: a database default or a custom
    # placeholder needs the compiler, which these models would have to take instead.
    unsupported = [
        model_field.name
        for model_field in fields
        if model_field.db_default is not models.NOT_PROVIDED
        or hasattr(model_field, "get_placeholder")
    ]
    if unsupported:
        raise TypeError(f"InsertBatch cannot write {model.__name__}.{unsupported} as plain values")
    return fields


@cache
def _plain_insert_sql(
    model: type[models.Model], ignore_conflicts: bool, rows: int, vendor: str
) -> str:
    """`INSERT … VALUES (%s, …), …` for `rows` rows (the vendor keys the cache: its quoting
    and its IGNORE clause differ)."""
    quote = connection.ops.quote_name
    fields = inserted_fields(model)
    on_conflict = OnConflict.IGNORE if ignore_conflicts else None
    row = f"({', '.join(['%s'] * len(fields))})"
    return (
        f"{connection.ops.insert_statement(on_conflict=on_conflict)} "
        f"{quote(model._meta.db_table)} ({', '.join(quote(f.column) for f in fields)}) "
        f"VALUES {', '.join([row] * rows)}"
    )


def _plain_inserts(insert: _Insert) -> list[tuple[str, list[Any]]]:
    """The INSERTs for these rows, as many as the database's parameter limit needs, with
    each value prepared by its field as `bulk_create` prepares it."""
    _prepare_for_bulk_create(insert)
    fields = inserted_fields(insert.model)
    per_statement = connection.ops.bulk_batch_size(fields, insert.rows) or len(insert.rows)
    statements = []
    for start in range(0, len(insert.rows), per_statement):
        chunk = insert.rows[start : start + per_statement]
        params = [value for row in chunk for value in prepared_values(row, fields)]
        sql = _plain_insert_sql(
            insert.model, insert.ignore_conflicts, len(chunk), connection.vendor
        )
        statements.append((sql, params))
    return statements


def prepared_values(row: models.Model, fields: tuple[models.Field, ...]) -> list[Any]:
    """`row`'s values for `fields`, each prepared by its field as `save` and `bulk_create`
    prepare it, so what a hand-written insert stores is what the ORM would."""
    return [
        model_field.get_db_prep_save(model_field.pre_save(row, True), connection)
        for model_field in fields
    ]
