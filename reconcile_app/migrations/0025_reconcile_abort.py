"""`reconcile_abort(reason)`: a statement that finds it cannot complete undoes itself.

The snapshot's one-statement write (services/snapshot_statement.py) runs in autocommit; when
it finds a lineage node it cannot see (committed by another transaction while it waited on
the node's key), it calls this function, which raises with SQLSTATE RC001, so nothing of the
statement is kept and the writer sends it again. PostgreSQL only.
"""

from typing import Any

from django.db import migrations

CREATE = """
CREATE OR REPLACE FUNCTION reconcile_abort(reason text) RETURNS integer
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '%', reason USING ERRCODE = 'RC001';
END
$$
"""


def install(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE, params=None)  # no parameters: its % is plpgsql's


def remove(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP FUNCTION IF EXISTS reconcile_abort(text)")


class Migration(migrations.Migration):
    dependencies = [("reconcile_app", "0024_audit_request_id_index")]

    operations = [migrations.RunPython(install, remove)]
