"""The database triggers that move the cache epochs (reconcile_app/epochs.py) in the same
transaction as any change they cover.

Triggers rather than application code: every write counts, whichever path makes it (a
service, a queryset update, a bulk insert, a manual SQL fix), and no process can see a change
without seeing the new epoch. Values are random, so a value rolled back is never taken again
by a later change. Installed by migration 0018 and ensured after every `migrate` (apps.py):
SQLite drops a table's triggers when a migration rebuilds the table.
"""

from __future__ import annotations

from typing import Any

# table → the columns whose change matters (None: any update)
CONFIGURATION_TABLES: dict[str, list[str] | None] = {
    "reconcile_app_contract": None,
    "reconcile_app_contractfield": None,
    "reconcile_app_contractaction": None,
    "reconcile_app_policyrule": None,
    "reconcile_app_source": None,
    "reconcile_app_principal": None,
    "reconcile_app_capability": None,
    "reconcile_app_apikey": ["principal_id", "prefix", "key_hash", "revoked_at"],
    # A superuser holds every people's role without a group (roles.py): taking the flag
    # away must reach the copy of a token's user as taking a role away does.
    "auth_user": ["is_active", "is_superuser"],
    # A person's roles are their groups (roles.py): the copy of a key's user that the gate
    # keeps must not hold roles taken away.
    "auth_user_groups": None,
}
QUARANTINE_TABLES: dict[str, list[str] | None] = {
    "reconcile_app_quarantine": ["scope", "target", "status"]
}
EPOCH_TABLES = {
    "configuration": ("reconcile_app_configurationepoch", CONFIGURATION_TABLES),
    "quarantine": ("reconcile_app_quarantineepoch", QUARANTINE_TABLES),
}


def _sqlite(epoch_table: str, table: str, event: str, columns: list[str] | None) -> tuple[str, str]:
    name = f"reconcile_epoch_{table}_{event.lower()}"
    of = f" OF {', '.join(columns)}" if event == "UPDATE" and columns else ""
    return (
        # Identifiers from the tables above, never from input.
        f"CREATE TRIGGER IF NOT EXISTS {name} AFTER {event}{of} ON {table} BEGIN "  # noqa: S608  # nosec B608
        f"UPDATE {epoch_table} SET epoch = abs(random() % 9000000000000000) WHERE id = 1; END",
        f"DROP TRIGGER IF EXISTS {name}",
    )


def _postgresql(
    kind: str, epoch_table: str, table: str, columns: list[str] | None
) -> tuple[str, str]:
    function = f"reconcile_{kind}_epoch_bump"
    update = f"UPDATE OF {', '.join(columns)}" if columns else "UPDATE"
    name = f"reconcile_epoch_{table}"
    return (
        f"CREATE OR REPLACE TRIGGER {name} AFTER INSERT OR {update} OR DELETE ON {table} "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {function}()",
        f"DROP TRIGGER IF EXISTS {name} ON {table}",
    )


def statements(vendor: str) -> tuple[list[str], list[str]]:
    """(forward, backward) SQL for this database."""
    forward, backward = [], []
    for kind, (epoch_table, tables) in EPOCH_TABLES.items():
        if vendor == "postgresql":
            function = f"reconcile_{kind}_epoch_bump"
            forward.append(
                f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger AS $$ BEGIN "  # noqa: S608  # nosec B608
                f"UPDATE {epoch_table} SET epoch = floor(random() * 9e15)::bigint WHERE id = 1; "
                f"RETURN NULL; END $$ LANGUAGE plpgsql"
            )
            for table, columns in tables.items():
                create, drop = _postgresql(kind, epoch_table, table, columns)
                forward.append(create)
                backward.append(drop)
            backward.append(f"DROP FUNCTION IF EXISTS {function}()")
        else:
            for table, columns in tables.items():
                for event in ("INSERT", "UPDATE", "DELETE"):
                    create, drop = _sqlite(epoch_table, table, event, columns)
                    forward.append(create)
                    backward.append(drop)
    return forward, backward


def epoch_triggers_ensure(connection: Any) -> None:
    """Install whatever trigger or epoch row is missing (idempotent)."""
    import secrets

    forward, _ = statements(connection.vendor)
    with connection.cursor() as cursor:
        for table in ("reconcile_app_configurationepoch", "reconcile_app_quarantineepoch"):
            cursor.execute(f"SELECT 1 FROM {table} WHERE id = 1")  # noqa: S608  # nosec B608
            if cursor.fetchone() is None:
                cursor.execute(
                    f"INSERT INTO {table} (id, epoch) VALUES (1, %s)",  # noqa: S608  # nosec B608
                    [secrets.randbelow(2**52)],
                )
        for sql in forward:
            cursor.execute(sql)
