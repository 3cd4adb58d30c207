"""DATABASES from the environment: connection options, and connections kept between requests."""

from __future__ import annotations

from config.database import CONN_MAX_AGE_SECONDS, database_settings

URL = "postgres://reconcile@db.internal:5432/reconcile"


def _options(**flags: bool) -> dict:
    return database_settings(database_url=URL, sqlite_path="", sqlite_test_path="", **flags)[
        "default"
    ]["OPTIONS"]


def test_postgresql_prepares_the_gates_statement_unless_told_not_to():
    # Django's default (None) never prepares; the snapshot statement's cursor needs a number.
    assert _options()["prepare_threshold"] == 5
    # Behind a transaction pooler that cannot hold prepared statements.
    assert "prepare_threshold" not in _options(postgresql_prepared_statements=False)
    assert _options()["options"] == "-c jit=off"


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
