"""PostgreSQL refuses UPDATE, DELETE and TRUNCATE on the append-only tables by trigger.

Other databases rely on the application's refusal (reconcile_app/models/append_only.py).
"""

from __future__ import annotations

from django.db import migrations

from reconcile_app.append_only_triggers import refusal_install, refusal_remove

# The tables as they were when this migration was written: a migration is history, so the
# list lives here rather than in the models. The sandbox's effect ledger has since moved to
# sandbox_app under the same table name, and its trigger with it.
APPEND_ONLY_TABLES = (
    "reconcile_app_evidenceentry",
    "reconcile_app_decisionsnapshot",
    "reconcile_app_stateread",
    "reconcile_app_claimverdict",
    "reconcile_app_decisionreceipt",
    "reconcile_app_effectevent",
    "reconcile_app_sandboxeffect",
    "reconcile_app_auditevent",
)

# TRUNCATE is allowed only when the session says so explicitly (`SET LOCAL
# reconcile.allow_truncate = 'on'`): the test suite's between-test flush does, nothing in the
# product does. UPDATE and DELETE are never allowed.
FUNCTION = """
CREATE OR REPLACE FUNCTION reconcile_refuse_change() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' AND current_setting('reconcile.allow_truncate', true) = 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'reconcile: % on % is refused: the table is append-only', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
"""


def install(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    # params=None: the % signs are plpgsql's, not placeholders.
    schema_editor.execute(FUNCTION, params=None)
    for table in APPEND_ONLY_TABLES:
        refusal_install(schema_editor, table)


def remove(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table in APPEND_ONLY_TABLES:
        refusal_remove(schema_editor, table)
    schema_editor.execute("DROP FUNCTION IF EXISTS reconcile_refuse_change()")


class Migration(migrations.Migration):
    dependencies = [("reconcile_app", "0008_quarantine")]
    operations = [migrations.RunPython(install, remove)]
