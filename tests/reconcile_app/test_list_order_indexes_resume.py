"""Migration 0035 builds its indexes CONCURRENTLY, outside a transaction: a run stopped
part-way (a deploy cancelled, a statement timeout, a lost host) leaves what it built behind,
and an interrupted build leaves an invalid index of the same name. Running it again must
finish the job, not fail on "relation already exists" until someone drops indexes by hand."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("reconcile_app", "0034_superuser_moves_the_configuration_epoch")
INDEXES = ("audit_kind_at", "memory_recorded_at")


def _migrate_to(target: tuple[str, str]) -> None:
    MigrationExecutor(connection).migrate([target])


def _validity() -> dict[str, bool]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c"
            " ON c.oid = i.indexrelid WHERE c.relname = ANY(%s)",
            [list(INDEXES)],
        )
        return dict(cursor.fetchall())


def test_0035_run_again_after_an_interrupted_run_finishes():
    if connection.vendor != "postgresql":
        pytest.skip("SQLite builds the indexes in the migration's own transaction")
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes("reconcile_app")[0]
    _migrate_to(BEFORE)
    try:
        with connection.cursor() as cursor:
            # What an interrupted run leaves: the first index built, the second's build
            # failed (PostgreSQL keeps such an index, marked invalid).
            cursor.execute(
                "CREATE INDEX audit_kind_at ON reconcile_app_auditevent (object_kind, at, id)"
            )
            cursor.execute(
                "CREATE INDEX memory_recorded_at ON reconcile_app_memoryrecord (recorded_at, id)"
            )
            cursor.execute(
                "UPDATE pg_index SET indisvalid = false"
                " WHERE indexrelid = 'memory_recorded_at'::regclass"
            )
        outcome = "migrated"
        try:
            _migrate_to(latest)
        except Exception as exc:
            outcome = f"{type(exc).__name__}: {exc}"
        validity = _validity()
    finally:
        with connection.cursor() as cursor:
            for name in INDEXES:
                cursor.execute(f"DROP INDEX IF EXISTS {name}")
        _migrate_to(BEFORE)
        _migrate_to(latest)
    assert outcome == "migrated"
    assert validity == dict.fromkeys(INDEXES, True)
