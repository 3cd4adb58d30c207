"""An index on the effects' timeline times: `GET /api/v1/effects?changed_after=` finds the
effects that moved in a window through their events (filtersets.EffectFilterSet), and every
effect writes several events. Built online on PostgreSQL, as 0035's are."""

from __future__ import annotations

from importlib import import_module

from django.db import migrations, models

AddIndexOnline = import_module("reconcile_app.migrations.0035_list_order_indexes").AddIndexOnline


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("reconcile_app", "0037_effect_target_index"),
    ]

    operations = [
        AddIndexOnline(
            model_name="effectevent",
            index=models.Index(fields=["at"], name="effectevent_at_idx"),
        ),
    ]
