"""The sandbox keeps its authority history: every authority it gives is a row from its moment.

Each authority already registered becomes the first row of its history, in force from its
`updated_at` (the best-known moment: what it said before that was never kept). On
PostgreSQL the history refuses UPDATE, DELETE and TRUNCATE like the rest of history (the
function comes from reconcile_app 0009, which sandbox_app 0001 follows).
"""

from django.db import migrations, models

from reconcile_app.append_only_triggers import refusal_operations

TABLE = "sandbox_app_sandboxauthoritychange"


def backfill_authority_history(apps, schema_editor):
    authority = apps.get_model("sandbox_app", "SandboxAuthority")
    change = apps.get_model("sandbox_app", "SandboxAuthorityChange")
    alias = schema_editor.connection.alias
    change.objects.using(alias).bulk_create(
        (
            change(
                source=row.source,
                fact_key=row.fact_key,
                owner=row.owner,
                source_revision=row.source_revision,
                at=row.updated_at,
            )
            for row in authority.objects.using(alias).order_by("pk").iterator()
        ),
        batch_size=1000,
    )


protect, unprotect = refusal_operations(TABLE)


class Migration(migrations.Migration):
    dependencies = [
        ("sandbox_app", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="SandboxAuthorityChange",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("source", models.SlugField(max_length=100)),
                ("fact_key", models.CharField(max_length=200)),
                ("owner", models.CharField(blank=True, default="", max_length=200)),
                ("source_revision", models.CharField(blank=True, default="", max_length=200)),
                ("at", models.DateTimeField()),
            ],
            options={
                "ordering": ["source", "fact_key", "at", "id"],
                "indexes": [models.Index(fields=["source", "fact_key", "at"], name="sandbox_authority_at")],
            },
        ),
        migrations.RunPython(backfill_authority_history, migrations.RunPython.noop),
        migrations.RunPython(protect, unprotect),
    ]
