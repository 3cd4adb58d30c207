"""PostgreSQL's refusal of UPDATE, DELETE and TRUNCATE on an append-only table, as the
migrations that create such tables install it (the function `reconcile_refuse_change()`
comes from reconcile_app's migration 0009). Other databases rely on the application's
refusal (reconcile_app/models/append_only.py).

Migrations import this module, so what it emits must not change: a new rule is a new
function here and a new migration, never an edit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

MigrationFunction = Callable[[Any, Any], None]


def refusal_install(schema_editor: Any, table: str) -> None:
    """The row trigger (UPDATE, DELETE) and the statement trigger (TRUNCATE) on `table`."""
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(
        f"CREATE TRIGGER {table}_no_change BEFORE UPDATE OR DELETE ON {table} "
        "FOR EACH ROW EXECUTE FUNCTION reconcile_refuse_change()"
    )
    schema_editor.execute(
        f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
        "FOR EACH STATEMENT EXECUTE FUNCTION reconcile_refuse_change()"
    )


def refusal_remove(schema_editor: Any, table: str) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_no_change ON {table}")
    schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_no_truncate ON {table}")


def refusal_operations(*tables: str) -> tuple[MigrationFunction, MigrationFunction]:
    """`RunPython(install, remove)` arguments protecting `tables`."""

    def install(apps: Any, schema_editor: Any) -> None:
        for table in tables:
            refusal_install(schema_editor, table)

    def remove(apps: Any, schema_editor: Any) -> None:
        for table in tables:
            refusal_remove(schema_editor, table)

    return install, remove
