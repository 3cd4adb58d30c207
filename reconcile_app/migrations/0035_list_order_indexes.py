"""Indexes for two orders read on every page load (models/audit.py, models/memory.py), and
for the values two pages walk: the audit trail's actors and the memory classes claims cite
(models/audit.py, models/snapshots.py; selectors/loose_scan.py).

Built CONCURRENTLY on PostgreSQL: a plain CREATE INDEX holds a SHARE lock on the table for
the whole build, refusing every insert meanwhile, and these tables are written by every
audited action, every memory write and every claim (300k audit rows: seconds; a year's estate: longer).
Hence a non-atomic migration. Elsewhere (SQLite) the index is built the ordinary way.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations, models


class AddIndexOnline(migrations.AddIndex):
    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        model = to_state.apps.get_model(app_label, self.model_name)
        if not self.allow_migrate_model(schema_editor.connection.alias, model):
            return
        if schema_editor.connection.vendor == "postgresql":
            # A concurrent build that failed (a cancel, a lost connection) leaves its index
            # behind, invalid, and the migration unrecorded: the next run builds it afresh
            # rather than stopping on "already exists".
            schema_editor.execute(
                f"DROP INDEX CONCURRENTLY IF EXISTS {schema_editor.quote_name(self.index.name)}"
            )
            schema_editor.add_index(model, self.index, concurrently=True)
        else:
            schema_editor.add_index(model, self.index)

    def database_backwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        model = from_state.apps.get_model(app_label, self.model_name)
        if not self.allow_migrate_model(schema_editor.connection.alias, model):
            return
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.remove_index(model, self.index, concurrently=True)
        else:
            schema_editor.remove_index(model, self.index)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("reconcile_app", "0034_superuser_moves_the_configuration_epoch"),
    ]

    operations = [
        AddIndexOnline(
            model_name="auditevent",
            index=models.Index(fields=["object_kind", "at", "id"], name="audit_kind_at"),
        ),
        AddIndexOnline(
            model_name="auditevent",
            index=models.Index(fields=["actor_name"], name="audit_actor_name"),
        ),
        AddIndexOnline(
            model_name="memoryrecord",
            index=models.Index(fields=["recorded_at", "id"], name="memory_recorded_at"),
        ),
        AddIndexOnline(
            model_name="claimverdict",
            index=models.Index(fields=["memory_class"], name="claimverdict_memory_class"),
        ),
    ]
