"""A cursor whose parameters are bound by PostgreSQL, so a statement sent often is prepared.

Django's PostgreSQL cursors bind parameters on the client (psycopg's ClientCursor): the
server parses and plans every statement it receives. For the few large statements on the
gate's hot path that is most of the server's work, so they go through a psycopg `Cursor`
instead, which sends parameters apart and prepares each statement on the connection the
first time it runs it (a `RawCursor` for a statement already written with `$n`
placeholders). Wrapped as Django wraps its own cursors, so errors, query logging and query
counts are the same.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from django.db import connection
from django.db.backends.utils import CursorWrapper


class _PreparingCursor(psycopg.Cursor):  # type: ignore[type-arg]
    """Prepares every statement it runs (psycopg keeps the 100 latest per connection).
    Django leaves the connection's `prepare_threshold` at None, which never prepares."""

    def execute(self, query: Any, params: Any = None, **options: Any) -> Any:
        options.setdefault("prepare", True)
        return super().execute(query, params, **options)


class _PreparingRawCursor(psycopg.RawCursor):  # type: ignore[type-arg]
    """The same, for a statement already written with PostgreSQL's own `$1` placeholders
    and a sequence of parameters: psycopg sends its text as it is. A statement with `%s`
    placeholders is split by a regular expression on every execution once it is longer
    than psycopg's 4 KB cache allows, as the gate's snapshot statement is."""

    def execute(self, query: Any, params: Any = None, **options: Any) -> Any:
        options.setdefault("prepare", True)
        return super().execute(query, params, **options)


@contextmanager
def hot_cursor() -> Iterator[CursorWrapper]:
    """For a small read on every reconcile: prepared on PostgreSQL, where parsing and
    planning a client-bound statement cost the server more than running it (0.4-0.7 ms a
    read sent as text, 0.1-0.25 ms prepared, bind included); Django's own cursor on SQLite."""
    if connection.vendor == "postgresql":
        with prepared_cursor() as cursor:
            yield cursor
    else:
        with connection.cursor() as cursor:
            yield cursor


@contextmanager
def prepared_cursor(*, dollar_placeholders: bool = False) -> Iterator[CursorWrapper]:
    """Inside a request or a transaction, like `connection.cursor()` (PostgreSQL only).
    With `dollar_placeholders`, statements are written with `$1`, `$2`… and take a list."""
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    connection.validate_thread_sharing()
    kind = _PreparingRawCursor if dollar_placeholders else _PreparingCursor
    with connection.wrap_database_errors:
        raw = kind(connection.connection)
    # The stubs name the wrapper as the argument; Django passes the driver's cursor.
    wrapped = (
        connection.make_debug_cursor(raw)  # type: ignore[arg-type]
        if connection.queries_logged
        else connection.make_cursor(raw)  # type: ignore[arg-type]
    )
    with wrapped:
        yield wrapped
