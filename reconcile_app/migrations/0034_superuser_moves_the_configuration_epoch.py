"""Taking `is_superuser` away moves the configuration epoch, as `is_active` does: a
superuser's roles come from the flag (reconcile_app/roles.py), and the in-process copy of a
token's user kept it, acting as an operator, until some other configuration changed.

PostgreSQL replaces the trigger in place (CREATE OR REPLACE); SQLite keeps a trigger of the
same name whatever its columns, so the user table's triggers are dropped and made again.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

from reconcile_app.epoch_triggers import statements


def _user_tables(sql: list[str]) -> list[str]:
    """The statements for auth_user's triggers (and auth_user_groups', which match too and
    are made again unchanged)."""
    return [statement for statement in sql if "auth_user" in statement]


def reinstall(apps: Any, schema_editor: Any) -> None:
    forward, backward = statements(schema_editor.connection.vendor)
    for sql in _user_tables(backward) + _user_tables(forward):
        schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [("reconcile_app", "0033_memory_supersession_invalidates")]

    operations = [migrations.RunPython(reinstall, migrations.RunPython.noop)]
