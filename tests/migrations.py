"""Move a test database to a point in its migration history, and back to the latest.

For the tests that prove a model moved between apps keeps its rows: migrate back to before the
move, write rows through the historical models, migrate forward and read them through the new
app. Moves are state-only, so the schema never changes under the other tests, even when such
a test fails half-way.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.apps.registry import Apps
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

Target = tuple[str, str]


def migrate_to(targets: list[Target]) -> Apps:
    """Apply or unapply migrations until exactly `targets` hold; the models as they were then."""
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def migrate_to_latest() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@contextmanager
def migrated_back_to(targets: list[Target]) -> Iterator[Apps]:
    """Inside: the database as of `targets`. After, and on failure: the latest migrations."""
    try:
        yield migrate_to(targets)
    finally:
        migrate_to_latest()
