"""Hot reads as one raw SELECT, their columns converted exactly as the ORM converts them.

Building and compiling a queryset costs more Python than a small indexed read costs the
database: for the few reads on every reconcile, the SQL is written once by hand (identifiers
from the models' `_meta`, values only as parameters) and each column goes through the
converters the ORM's compiler would apply for its field: JSON decoded by the JSONField,
SQLite's datetime strings parsed and made aware, the same on every engine.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections, models

from config.prepared_cursor import hot_cursor

Converter = Callable[[Any, Any, Any], Any]


def fields(model: type[models.Model], *names: str) -> list[models.Field[Any, Any]]:
    """The model's concrete fields of these names (what `select` converts columns as)."""
    found = [model._meta.get_field(name) for name in names]
    return [field for field in found if isinstance(field, models.Field)]


def column(model: type[models.Model], name: str, alias: str) -> str:
    """`alias."column"` for a model's field, quoted for this connection."""
    (field,) = fields(model, name)
    return f"{alias}.{connection.ops.quote_name(field.column)}"


def table(model: type[models.Model], alias: str) -> str:
    return f"{connection.ops.quote_name(model._meta.db_table)} {alias}"


def select(
    sql: str, params: Sequence[Any], fields: Sequence[models.Field[Any, Any] | None]
) -> list[list[Any]]:
    """Rows of `sql`, each column converted as the ORM would for `fields` (None: as read)."""
    with hot_cursor(sql) as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    converters = _converters(fields)
    answered = []
    for row in rows:
        values = list(row)
        for position, expression, functions in converters:
            value = values[position]
            for function in functions:
                value = function(value, expression, connection)
            values[position] = value
        answered.append(values)
    return answered


# Per connection (its operations are bound to it), per column list: working the converters
# out is a few dozen microseconds a read, as much as the rest of the conversion.
_converters_by_connection: weakref.WeakKeyDictionary[Any, dict[Any, Any]] = (
    weakref.WeakKeyDictionary()
)


def _converters(
    fields: Sequence[models.Field[Any, Any] | None],
) -> list[tuple[int, Any, list[Converter]]]:
    known = _converters_by_connection.setdefault(connections[DEFAULT_DB_ALIAS], {})
    # Keyed by the fields' identities: a tuple of the fields themselves is hashed by
    # `Field.__hash__`, Python reading three attributes per column, on every read. The
    # entry keeps the fields, so none of these identities can be reused by another object.
    key = tuple(map(id, fields))
    entry = known.get(key)
    if entry is None:
        entry = known[key] = (tuple(fields), _converters_of(fields))
    converters: list[tuple[int, Any, list[Converter]]] = entry[1]
    return converters


def _converters_of(
    fields: Sequence[models.Field[Any, Any] | None],
) -> list[tuple[int, Any, list[Converter]]]:
    # What SQLCompiler.get_converters does for a column of each field.
    found = []
    for position, field in enumerate(fields):
        if field is None:
            continue
        expression = field.get_col(field.model._meta.db_table)
        functions = connection.ops.get_db_converters(expression) + expression.get_db_converters(
            connection
        )
        if functions:
            found.append((position, expression, functions))
    return found
