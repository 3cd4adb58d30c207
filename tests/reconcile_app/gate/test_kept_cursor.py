"""The driver cursors the gate's hot statements keep per connection (config/prepared_cursor.py):
new ones after Django reconnects, nothing left holding a closed connection, and times loaded
as the ORM loads them."""

from __future__ import annotations

import gc
import weakref
from datetime import UTC

import pytest
from django.db import connection

from config.prepared_cursor import prepared_cursor

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="prepared cursors are PostgreSQL's"
)

A_TIME = "2026-01-02T03:04:05.123456+05:00"


def _driver_cursor() -> object:
    with prepared_cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchall()
        return cursor.cursor


@pytest.mark.django_db(transaction=True)
def test_a_connection_keeps_its_cursor_and_a_reconnection_lets_it_go():
    first = _driver_cursor()
    assert _driver_cursor() is first  # kept for the next statement
    closed_connection = weakref.ref(connection.connection)

    connection.close()
    again = _driver_cursor()

    assert again is not first
    del first
    gc.collect()
    # The closed connection is not held by a cursor kept somewhere (each cursor holds its
    # connection): a worker reconnecting every CONN_MAX_AGE would otherwise grow without end.
    assert closed_connection() is None


@pytest.mark.django_db
def test_times_are_loaded_as_the_orm_loads_them():
    with prepared_cursor() as cursor:
        cursor.execute("SELECT %s::timestamptz", [A_TIME])
        [[kept]] = cursor.fetchall()
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::timestamptz", [A_TIME])
        [[django]] = cursor.fetchall()

    assert kept == django
    assert kept.tzinfo is django.tzinfo is UTC
    assert kept.isoformat() == "2026-01-01T22:04:05.123456+00:00"


SQUARE = "SELECT %s::int * %s::int"


def _run(statement: str, params: list[int]) -> tuple[object, object, list[tuple[int]]]:
    with prepared_cursor(statement=statement) as cursor:
        cursor.execute(statement, params)
        rows = cursor.fetchall()
        return cursor.cursor, cursor.cursor._tx, rows


@pytest.mark.django_db
def test_a_statement_keeps_its_own_cursor_and_transformer():
    cursor, transformer, rows = _run(SQUARE, [3, 3])
    assert rows == [(9,)]
    _driver_cursor()  # another statement, on the shared cursor, in between
    again, transformer_again, rows = _run(SQUARE, [4, 4])
    assert rows == [(16,)]
    # The same cursor, whose transformer (loaders and dumpers looked up) psycopg reuses for
    # the same query; a cursor shared with the statement in between would have made a new one.
    assert again is cursor
    assert transformer_again is transformer
    assert _driver_cursor() is not cursor


@pytest.mark.django_db
def test_past_the_limit_statements_share_one_cursor(monkeypatch):
    monkeypatch.setattr("config.prepared_cursor.MAX_STATEMENT_CURSORS", 0)
    shared = _driver_cursor()
    assert _run("SELECT %s::int + %s::int", [5, 5])[0] is shared
