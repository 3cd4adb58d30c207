import django.db.models.deletion
from django.db import migrations, models

from reconcile_app.append_only_triggers import refusal_operations

TABLE = "reconcile_app_reconciletiming"


# The same refusal as migration 0009's tables (its function already exists).
install, remove = refusal_operations(TABLE)


class Migration(migrations.Migration):
    dependencies = [
        ("reconcile_app", "0020_bulk_jobs"),
    ]

    operations = [
        migrations.CreateModel(
            name="ReconcileTiming",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("received_at", models.DateTimeField(db_index=True)),
                ("duration_ms", models.FloatField()),
                (
                    "snapshot",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="timing",
                        to="reconcile_app.decisionsnapshot",
                    ),
                ),
            ],
            options={"ordering": ["-received_at", "-id"]},
        ),
        migrations.RunPython(install, remove),
    ]
