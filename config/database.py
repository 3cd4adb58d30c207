"""DATABASES for settings.py: PostgreSQL from DATABASE_URL, else the embedded SQLite file.

SQLite gets the same connection options however it is named, by RECONCILE_SQLITE_PATH or by
a `sqlite://` DATABASE_URL (a worker pointed at the server's file, a test database): without
them its transactions are DEFERRED, a transaction that has read and then writes cannot wait
for another writer (the lock upgrade skips the busy timeout), and the write fails at once with
"database is locked".
"""

from __future__ import annotations

from typing import Any

import dj_database_url

SQLITE_OPTIONS: dict[str, Any] = {
    # IMMEDIATE: BEGIN takes the write lock (waiting up to the timeout for another writer),
    # so no transaction ever has to upgrade a read snapshot to a write.
    "transaction_mode": "IMMEDIATE",
    "timeout": 20,
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
}
# A new PostgreSQL connection gives up after this long (libpq's `connect_timeout`, unless
# DATABASE_URL sets its own): without it, a server that accepts the connection and never
# answers holds the request, or `/readyz`'s check, for good.
POSTGRESQL_CONNECT_TIMEOUT_SECONDS = 5
POSTGRESQL_TCP_USER_TIMEOUT_MS = 10_000
# Connections are kept for a minute rather than opened per request. On PostgreSQL that saves
# a connection's start-up; on SQLite it saves more than it sounds: a new connection reads the
# whole schema again, and Django registers its SQL functions and runs the PRAGMAs on each.
CONN_MAX_AGE_SECONDS = 60


def database_settings(
    *,
    database_url: str,
    sqlite_path: str,
    sqlite_test_path: str,
    postgresql_prepared_statements: bool = True,
) -> dict[str, Any]:
    if database_url:
        default = dj_database_url.parse(database_url, conn_max_age=CONN_MAX_AGE_SECONDS)
    else:
        default = {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": sqlite_path,
            # A file, not the default shared in-memory database: with a live server thread
            # writing beside the test, shared-cache memory databases fail with "table is
            # locked" where a WAL file with a busy timeout simply waits.
            "TEST": {"NAME": sqlite_test_path},
            "CONN_MAX_AGE": CONN_MAX_AGE_SECONDS,  # as a `sqlite://` URL gets it above
        }
    engine = default["ENGINE"]
    options = default.setdefault("OPTIONS", {})
    if engine.endswith("postgresql"):
        # Django's backend with a health check that costs no round trip
        # (config/postgresql/base.py): kept connections survive a server restart.
        default["ENGINE"] = "config.postgresql"
        default["CONN_HEALTH_CHECKS"] = True
        # JIT compiles any query the planner thinks expensive; recursive CTEs are always
        # estimated huge, so lineage queries paid 15-150 ms of compilation for nothing.
        options.setdefault("options", "-c jit=off")
        options.setdefault("connect_timeout", POSTGRESQL_CONNECT_TIMEOUT_SECONDS)
        # ...and a connection whose server stops acknowledging what is sent (a host gone, a
        # partition) fails after this long, not after the kernel's ~15 minutes of retries.
        # It bounds no query's run time: a server that acknowledges is waited for.
        options.setdefault("tcp_user_timeout", POSTGRESQL_TCP_USER_TIMEOUT_MS)
        # Django's own cursors bind on the client and never prepare; the gate's snapshot
        # statement and its reads are bound by the server (config/prepared_cursor.py) and
        # prepared when the connection allows it. Django leaves `prepare_threshold` at None
        # (never) for the sake of transaction poolers; RECONCILE_PG_PREPARED_STATEMENTS=0
        # keeps it so behind one that cannot hold prepared statements (docs/deploy.md).
        if postgresql_prepared_statements:
            options.setdefault("prepare_threshold", 5)
    elif engine.endswith("sqlite3"):
        for name, value in SQLITE_OPTIONS.items():
            options.setdefault(name, value)
    return {"default": default}
