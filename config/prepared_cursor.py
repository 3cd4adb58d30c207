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
from datetime import UTC
from typing import Any

import psycopg
from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.backends.base.base import BaseDatabaseWrapper
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
def hot_cursor(statement: str) -> Iterator[CursorWrapper]:
    """For a small read on every reconcile: prepared on PostgreSQL, where parsing and
    planning a client-bound statement cost the server more than running it (0.4-0.7 ms a
    read sent as text, 0.1-0.25 ms prepared, bind included); Django's own cursor on SQLite.
    `statement`: the SQL the cursor will run, for a cursor of its own (`prepared_cursor`)."""
    if connection.vendor == "postgresql":
        with prepared_cursor(statement=statement) as cursor:
            yield cursor
    else:
        with connection.cursor() as cursor:
            yield cursor


@contextmanager
def prepared_cursor(
    *, dollar_placeholders: bool = False, statement: str | None = None
) -> Iterator[CursorWrapper]:
    """Inside a request or a transaction, like `connection.cursor()` (PostgreSQL only).
    With `dollar_placeholders`, statements are written with `$1`, `$2`… and take a list.

    The driver's cursor is kept on the connection for the next statement instead of being
    made and closed for each: the gate sends four statements a request, and making a psycopg
    cursor (its transformer, its adapters) cost more Python than sending one. A cursor
    holds no server-side state between statements; its last result is replaced by the next.

    Given the `statement` it will run (the same string object each time), the cursor is
    that statement's own. psycopg keeps a cursor's transformer, with the loaders of the
    result's columns and the dumpers of the parameters it has looked up, only while the
    cursor runs the same query object as last time (`BaseCursor._start_query`); one cursor
    shared by the gate's four statements made a new transformer and looked every column's
    loader up again on each: about 4 % of a reconcile's web CPU (interleaved A/B in one
    process, 2026-12-02).
    """
    database = connections[DEFAULT_DB_ALIAS]  # one lookup of the thread's connection
    database.close_if_health_check_failed()
    database.ensure_connection()
    database.validate_thread_sharing()
    raw = _kept_cursor(
        database, _PreparingRawCursor if dollar_placeholders else _PreparingCursor, statement
    )
    # The stubs name the wrapper as the argument; Django passes the driver's cursor.
    yield (
        database.make_debug_cursor(raw)  # type: ignore[arg-type]
        if database.queries_logged
        else database.make_cursor(raw)  # type: ignore[arg-type]
    )


def _kept_cursor(
    database: BaseDatabaseWrapper,
    kind: type[psycopg.Cursor],  # type: ignore[type-arg]
    statement: str | None,
) -> psycopg.Cursor:  # type: ignore[type-arg]
    """The cursor of this kind (and statement) kept for the database's current driver
    connection: new ones once Django has reconnected (the old connection's cursors, kept on
    the same wrapper, go with it: a cursor holds its connection, so nothing else may hold
    the cursors). Past `MAX_STATEMENT_CURSORS` statements, the rest share one cursor."""
    driver = database.connection
    kept: tuple[Any, dict[Any, Any]] | None = database.__dict__.get(_KEPT)
    if kept is None or kept[0] is not driver:
        kept = database.__dict__[_KEPT] = (driver, {})
    cursors = kept[1]
    key = (kind, statement)
    cursor = cursors.get(key)
    if cursor is None and statement is not None and len(cursors) >= MAX_STATEMENT_CURSORS:
        key = (kind, None)
        cursor = cursors.get(key)
    if cursor is None or cursor.closed:
        with database.wrap_database_errors:
            cursor = cursors[key] = kind(driver)
        if _session_in_utc(database, driver):
            cursor.adapters.register_loader("timestamptz", _DRIVER_TIMESTAMPTZ_LOADER)
    return cursor  # type: ignore[no-any-return]


_KEPT = "_reconcile_kept_cursors"
# The gate's statements number a dozen (the owner read's one per count of fields asked).
MAX_STATEMENT_CURSORS = 64


# psycopg's own loader (compiled, with psycopg-binary). Django registers a Python subclass
# of it that replaces each value's tzinfo with the connection's time zone, a few
# microseconds per timestamp: a fifth of the owner read's time, which returns three. Set on
# these cursors only: on the connection, Django's `create_cursor` would read the loader's
# `timezone` attribute, which the compiled class has not (nor can a subclass add it).
_DRIVER_TIMESTAMPTZ_LOADER: type[psycopg.adapt.Loader] = psycopg.postgres.adapters.get_loader(  # type: ignore[assignment]
    psycopg.postgres.types["timestamptz"].oid, psycopg.pq.Format.TEXT
)


def _session_in_utc(database: BaseDatabaseWrapper, driver: Any) -> bool:
    """Whether psycopg's loader gives what Django's would: Django wants `timezone.utc`
    (USE_TZ with a UTC database), and a session whose TimeZone is `UTC` is given exactly
    that object by psycopg (psycopg/_tz.py), from the same instant."""
    return bool(database.timezone is UTC and driver.info.parameter_status("TimeZone") == "UTC")
