from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ReconcileAppConfig(AppConfig):
    name = "reconcile_app"
    verbose_name = "Reconcile"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from reconcile_app import checks  # noqa: F401 - registers the system checks
        from reconcile_app.api import schema  # noqa: F401 - registers the OpenAPI auth scheme
        from reconcile_app.console import session_limits  # noqa: F401 - stamps each sign-in
        from reconcile_app.lineage_registration import register_with_lineage

        # lineage_app knows no kind of node until reconcile registers its own, as apps
        # register with the admin.
        register_with_lineage()
        _raise_sqlite_parameter_limit()
        post_migrate.connect(_ensure_epoch_triggers, sender=self)


def _ensure_epoch_triggers(using: str = "default", **kwargs: Any) -> None:
    """After every migrate (and every test flush, which sends post_migrate too): the cache
    epochs' rows and triggers exist, whatever a migration rebuilt."""
    from django.db import connections
    from django.db.migrations.recorder import MigrationRecorder

    from reconcile_app.epoch_triggers import epoch_triggers_ensure

    connection = connections[using]
    applied = MigrationRecorder(connection).applied_migrations()
    if ("reconcile_app", "0018_configuration_epoch") in applied:
        epoch_triggers_ensure(connection)


def _raise_sqlite_parameter_limit() -> None:
    """Let bulk inserts use the SQLite library's real parameter limit.

    Django 5.2 assumes the old compile-time default of 999 variables, which splits a
    snapshot's claim verdicts into several INSERTs; SQLite ≥ 3.32 allows 32,766 (Django 6
    reads the limit from the connection the same way). One statement per table keeps the
    number of queries per reconcile independent of the number of claims.
    """
    import sqlite3

    from django.db import connections

    if not any(connection.vendor == "sqlite" for connection in connections.all()):
        return
    from django.db.backends.sqlite3.base import DatabaseWrapper

    probe = sqlite3.connect(":memory:")
    try:
        limit = probe.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
    finally:
        probe.close()
    DatabaseWrapper.features_class.max_query_params = limit
