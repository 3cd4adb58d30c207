"""The configuration epoch, and the triggers that move it and the quarantine epoch
(reconcile_app/epoch_triggers.py says why and how)."""

from django.conf import settings
from django.db import migrations, models

from reconcile_app.epoch_triggers import statements

def install(apps, schema_editor):
    import secrets

    ConfigurationEpoch = apps.get_model("reconcile_app", "ConfigurationEpoch")
    QuarantineEpoch = apps.get_model("reconcile_app", "QuarantineEpoch")
    ConfigurationEpoch.objects.get_or_create(pk=1, defaults={"epoch": secrets.randbelow(2**52)})
    QuarantineEpoch.objects.get_or_create(pk=1, defaults={"epoch": secrets.randbelow(2**52)})
    forward, _ = statements(schema_editor.connection.vendor)
    for sql in forward:
        schema_editor.execute(sql)


def uninstall(apps, schema_editor):
    _, backward = statements(schema_editor.connection.vendor)
    for sql in backward:
        schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [
        ("reconcile_app", "0017_contract_lifecycle"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="ConfigurationEpoch",
            fields=[
                (
                    "id",
                    models.PositiveSmallIntegerField(default=1, primary_key=True, serialize=False),
                ),
                ("epoch", models.BigIntegerField(default=0)),
            ],
        ),
        migrations.RunPython(install, uninstall),
    ]
