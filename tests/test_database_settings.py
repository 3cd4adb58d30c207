"""DATABASES from the environment: connection options, and connections kept between requests."""

from __future__ import annotations

import threading

from django.db.utils import ConnectionHandler, OperationalError

from config.database import (
    CONN_MAX_AGE_SECONDS,
    POSTGRESQL_CONNECT_TIMEOUT_SECONDS,
    database_settings,
)
from tests.listeners import silent_listener

URL = "postgres://reconcile@db.internal:5432/reconcile"


def _options(**flags: bool) -> dict:
    return database_settings(database_url=URL, sqlite_path="", sqlite_test_path="", **flags)[
        "default"
    ]["OPTIONS"]


def test_postgresql_runs_on_the_backend_that_checks_kept_connections():
    configured = database_settings(database_url=URL, sqlite_path="", sqlite_test_path="")
    assert configured["default"]["ENGINE"] == "config.postgresql"
    assert configured["default"]["CONN_HEALTH_CHECKS"] is True


def test_postgresql_prepares_the_gates_statement_unless_told_not_to():
    # Django's default (None) never prepares; the snapshot statement's cursor needs a number.
    assert _options()["prepare_threshold"] == 5
    # Behind a transaction pooler that cannot hold prepared statements.
    assert "prepare_threshold" not in _options(postgresql_prepared_statements=False)
    assert _options()["options"] == "-c jit=off"
    # A server that stops acknowledging fails the connection in 10 s, not ~15 minutes.
    assert _options()["tcp_user_timeout"] == 10_000


def test_sqlite_keeps_its_connections_however_it_is_named(tmp_path):
    # A new SQLite connection costs ~2.3 ms of CPU here (the schema read again, Django's
    # functions registered, the PRAGMAs): opened per request, it was a fifth of a reconcile.
    path = str(tmp_path / "reconcile.sqlite3")
    by_path = database_settings(database_url="", sqlite_path=path, sqlite_test_path=path)
    by_url = database_settings(
        database_url=f"sqlite:///{path}", sqlite_path="", sqlite_test_path=path
    )
    for configured in (by_path, by_url):
        assert configured["default"]["CONN_MAX_AGE"] == CONN_MAX_AGE_SECONDS > 0
    assert (
        database_settings(database_url=URL, sqlite_path="", sqlite_test_path="")["default"][
            "CONN_MAX_AGE"
        ]
        == CONN_MAX_AGE_SECONDS
    )


def test_a_postgresql_server_that_never_answers_fails_the_connection_in_seconds(
    django_db_blocker,
):
    # Without a connect timeout, libpq waits for the server's first word for ever: a request
    # (or /readyz's database check) held for good by a server that accepted and went quiet.
    with silent_listener() as port:
        configured = database_settings(
            database_url=f"postgres://reconcile@127.0.0.1:{port}/reconcile",
            sqlite_path="",
            sqlite_test_path="",
        )
        handler = ConnectionHandler(configured)
        outcome: list[BaseException] = []

        def connect() -> None:
            try:
                handler["default"].ensure_connection()
            except BaseException as exc:  # the outcome, whatever it is, is what we look at
                outcome.append(exc)
            finally:
                handler.close_all()

        attempt = threading.Thread(target=connect, daemon=True)
        with django_db_blocker.unblock():  # this one connection, to no test database
            attempt.start()
            attempt.join(POSTGRESQL_CONNECT_TIMEOUT_SECONDS + 10)

        assert not attempt.is_alive(), "the connection attempt is still waiting"
        assert [type(exc) for exc in outcome] == [OperationalError]


def test_a_database_url_may_set_its_own_connect_timeout():
    url = f"{URL}?connect_timeout=12"
    assert (
        database_settings(database_url=url, sqlite_path="", sqlite_test_path="")["default"][
            "OPTIONS"
        ]["connect_timeout"]
        == 12
    )
