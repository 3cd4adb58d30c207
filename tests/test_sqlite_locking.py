"""SQLite under concurrent writers: a transaction waits for the lock, it never fails at once.

With DEFERRED transactions a transaction that read first must upgrade its read snapshot to a
write; SQLite refuses that at once while another connection holds the write lock (the busy
timeout is never consulted), which the API answered as 503 `database_unavailable`. The
embedded mode's IMMEDIATE transactions take the lock at BEGIN, waiting for it, whichever way
the SQLite file is configured: RECONCILE_SQLITE_PATH, or a `sqlite://` DATABASE_URL (as a
worker is pointed at a server's file) — the URL once bypassed the options.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.db import connections, transaction

from config.database import database_settings

ALIAS = "sqlite_locking_probe"
HOLD_SECONDS = 1.0


def _configured(tmp_path: Path, how: str) -> dict[str, Any]:
    path = tmp_path / "probe.sqlite3"
    return database_settings(
        database_url=f"sqlite:///{path}" if how == "url" else "",
        sqlite_path=str(path),
        sqlite_test_path=str(tmp_path / "unused.sqlite3"),
    )["default"]


@contextmanager
def probe_database(config: dict[str, Any], django_db_blocker: Any) -> Iterator[str]:
    """An extra alias on a scratch file; each thread that uses it gets its own connection."""
    # configure_settings fills in Django's defaults (AUTOCOMMIT, CONN_MAX_AGE, TIME_ZONE...).
    configured = connections.configure_settings({"default": config})["default"]
    connections.settings[ALIAS] = configured
    try:
        with django_db_blocker.unblock():
            yield ALIAS
    finally:
        connections[ALIAS].close()
        del connections[ALIAS]
        del connections.settings[ALIAS]


@pytest.mark.parametrize("how", ["sqlite_path", "url"])
def test_sqlite_is_configured_with_immediate_transactions_and_wal(tmp_path, how):
    options = _configured(tmp_path, how)["OPTIONS"]
    assert options["transaction_mode"] == "IMMEDIATE"
    assert options["timeout"] >= 5
    assert "journal_mode=WAL" in options["init_command"]


@pytest.mark.parametrize("how", ["sqlite_path", "url"])
def test_a_transaction_that_reads_then_writes_waits_for_another_writer(
    tmp_path, how, django_db_blocker
):
    with probe_database(_configured(tmp_path, how), django_db_blocker) as alias:
        with connections[alias].cursor() as cursor:
            cursor.execute("CREATE TABLE record (id INTEGER PRIMARY KEY, value TEXT)")
            cursor.execute("INSERT INTO record (value) VALUES ('first')")
        holding = threading.Event()
        failures: list[BaseException] = []

        def another_writer() -> None:
            # A worker's transaction: it holds the write lock for a moment.
            try:
                with transaction.atomic(using=alias), connections[alias].cursor() as cursor:
                    cursor.execute("INSERT INTO record (value) VALUES ('worker')")
                    holding.set()
                    time.sleep(HOLD_SECONDS)
            except BaseException as exc:
                failures.append(exc)
                holding.set()
            finally:
                connections[alias].close()

        worker = threading.Thread(target=another_writer)
        worker.start()
        assert holding.wait(10)
        started = time.monotonic()
        # The sandbox's write: read the record, then insert, in one transaction.
        with transaction.atomic(using=alias), connections[alias].cursor() as cursor:
            cursor.execute("SELECT COUNT(*) FROM record")
            cursor.execute("INSERT INTO record (value) VALUES ('request')")
        waited = time.monotonic() - started
        worker.join(10)
        assert not failures
        # It waited for the other writer's commit, rather than failing without waiting.
        assert waited >= HOLD_SECONDS / 2
        with connections[alias].cursor() as cursor:
            cursor.execute("SELECT value FROM record ORDER BY id")
            assert [row[0] for row in cursor.fetchall()] == ["first", "worker", "request"]
