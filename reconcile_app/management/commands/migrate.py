"""`migrate`, with hosts that start together taking turns.

`./dev serve` migrates before it starts its processes, on every host of a deployment; two
hosts migrating one PostgreSQL database at once both see a migration unapplied and the second
fails half-way ("relation ... already exists"). A session-level advisory lock makes the
second wait, then find nothing left to do. SQLite is one machine's file: nothing to share.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.commands.migrate import Command as DjangoMigrate
from django.db import connections

# Any constant the product's other advisory locks do not use: "RECO" in ASCII.
MIGRATION_LOCK = 0x5245434F
TURN_POLL_SECONDS = 0.5


def _take_turn(connection: Any) -> None:
    """The lock, asked for again every half second rather than waited for in one statement.
    A host blocked in `pg_advisory_lock` holds a snapshot for as long as it waits, and
    CREATE INDEX CONCURRENTLY (migration 0035) waits for every transaction holding a snapshot
    older than its build: the host migrating waited for the host waiting on it (a deadlock,
    its index left invalid, and the second host then failed on "already exists")."""
    while True:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s)", [MIGRATION_LOCK])
            if cursor.fetchone()[0]:
                return
        time.sleep(TURN_POLL_SECONDS)


class Command(DjangoMigrate):
    help = DjangoMigrate.help + " On PostgreSQL, concurrent runs take turns (an advisory lock)."

    def handle(self, *args: Any, **options: Any) -> None:
        connection = connections[options["database"]]
        if connection.vendor != "postgresql":
            super().handle(*args, **options)
            return
        _take_turn(connection)
        try:
            super().handle(*args, **options)
        finally:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [MIGRATION_LOCK])
