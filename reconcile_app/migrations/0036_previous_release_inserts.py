"""The columns 0027, 0028, 0031 and 0032 added keep a default in the database.

Django fills an added column's existing rows from the field's default, then drops the default
from the table. A rolling upgrade migrates while the previous release's processes still run
(docs/deploy.md, "A release"), and their inserts do not name the new columns: each insert of a
bulk job, a bulk item or a contract activation failed on NOT NULL (an old web process answered
500 to `POST /api/v1/effects/bulk` and to an activation) until the last old process was gone.
Those migrations now add the columns with `db_default` (an upgrade that has not run them yet
has the default from the start); this one sets it where they already ran, so it alters the
tables whatever the recorded state says (setting a default twice changes nothing). On
PostgreSQL `SET DEFAULT` only changes the catalogue: no row is rewritten. (SQLite rebuilds
the three small tables.)
"""

from __future__ import annotations

import copy
from typing import Any

from django.db import migrations
from django.db.models import NOT_PROVIDED

COLUMNS = (
    ("bulkjob", "cancel_reason"),
    ("bulkjob", "cancelled_by_name"),
    ("bulkjob", "still_unknown"),
    ("bulkjobitem", "selected_status"),
    ("contractactivation", "attempts"),
)


def defaults_set(apps: Any, schema_editor: Any) -> None:
    for model_name, name in COLUMNS:
        model = apps.get_model("reconcile_app", model_name)
        field = model._meta.get_field(name)
        without = copy.copy(field)
        without.db_default = NOT_PROVIDED
        schema_editor.alter_field(model, without, field)


class Migration(migrations.Migration):
    dependencies = [
        ("reconcile_app", "0035_list_order_indexes"),
    ]

    operations = [migrations.RunPython(defaults_set, migrations.RunPython.noop)]
