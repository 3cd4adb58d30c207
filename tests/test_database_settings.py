"""DATABASES from the environment: PostgreSQL's connection options."""

from __future__ import annotations

from config.database import database_settings

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
