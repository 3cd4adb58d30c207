"""An index on an effect's target (subject, field, source): a readback that would verify
looks for another command the owner accepted on the same target after this one's receipt
(services/effects/readback.py), and effects grow by every commit. Built online on
PostgreSQL, as 0035's are."""

from __future__ import annotations

from importlib import import_module

from django.db import migrations, models

AddIndexOnline = import_module("reconcile_app.migrations.0035_list_order_indexes").AddIndexOnline


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("reconcile_app", "0036_previous_release_inserts"),
    ]

    operations = [
        AddIndexOnline(
            model_name="effect",
            index=models.Index(fields=["subject", "field", "source"], name="effect_target"),
        ),
    ]
