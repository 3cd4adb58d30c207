import django.db.models.deletion
from django.db import migrations, models

TABLE = "reconcile_app_reconciletiming"


def install(apps, schema_editor):
    # The same refusal as migration 0009's tables (its function already exists).
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(
        f"CREATE TRIGGER {TABLE}_no_change BEFORE UPDATE OR DELETE ON {TABLE} "
        "FOR EACH ROW EXECUTE FUNCTION reconcile_refuse_change()"
    )
    schema_editor.execute(
        f"CREATE TRIGGER {TABLE}_no_truncate BEFORE TRUNCATE ON {TABLE} "
        "FOR EACH STATEMENT EXECUTE FUNCTION reconcile_refuse_change()"
    )


def remove(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"DROP TRIGGER IF EXISTS {TABLE}_no_change ON {TABLE}")
    schema_editor.execute(f"DROP TRIGGER IF EXISTS {TABLE}_no_truncate ON {TABLE}")


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
