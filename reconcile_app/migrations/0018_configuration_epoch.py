"""The configuration epoch, and the triggers that move it and the quarantine epoch.

Triggers rather than application code: every write counts, whichever path makes it (a
service, a queryset update, a bulk insert, a manual SQL fix), and the epoch moves in the
writer's own transaction, so no process can see the change without seeing the new epoch.
Values are random so that one rolled back is never taken again by a later change.
"""

from django.conf import settings
from django.db import migrations, models

# table → the columns whose change matters (None: any update)
CONFIGURATION_TABLES = {
    "reconcile_app_contract": None,
    "reconcile_app_contractfield": None,
    "reconcile_app_contractaction": None,
    "reconcile_app_policyrule": None,
    "reconcile_app_source": None,
    "reconcile_app_principal": None,
    "reconcile_app_capability": None,
    "reconcile_app_apikey": ["principal_id", "prefix", "key_hash", "revoked_at"],
    "auth_user": ["is_active"],
}
QUARANTINE_TABLES = {"reconcile_app_quarantine": ["scope", "target", "status"]}
EPOCH_TABLES = {
    "configuration": ("reconcile_app_configurationepoch", CONFIGURATION_TABLES),
    "quarantine": ("reconcile_app_quarantineepoch", QUARANTINE_TABLES),
}


def _sqlite(epoch_table, table, event, columns):
    name = f"reconcile_epoch_{table}_{event.lower()}"
    of = f" OF {', '.join(columns)}" if event == "UPDATE" and columns else ""
    return (
        f"CREATE TRIGGER {name} AFTER {event}{of} ON {table} BEGIN "
        f"UPDATE {epoch_table} SET epoch = abs(random() % 9000000000000000) WHERE id = 1; END",
        f"DROP TRIGGER IF EXISTS {name}",
    )


def _postgresql(kind, epoch_table, table, columns):
    function = f"reconcile_{kind}_epoch_bump"
    update = f"UPDATE OF {', '.join(columns)}" if columns else "UPDATE"
    name = f"reconcile_epoch_{table}"
    return (
        f"CREATE TRIGGER {name} AFTER INSERT OR {update} OR DELETE ON {table} "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {function}()",
        f"DROP TRIGGER IF EXISTS {name} ON {table}",
    )


def statements(vendor):
    """(forward, backward) SQL for this database."""
    forward, backward = [], []
    for kind, (epoch_table, tables) in EPOCH_TABLES.items():
        if vendor == "postgresql":
            function = f"reconcile_{kind}_epoch_bump"
            forward.append(
                f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger AS $$ BEGIN "
                f"UPDATE {epoch_table} SET epoch = floor(random() * 9e15)::bigint WHERE id = 1; "
                f"RETURN NULL; END $$ LANGUAGE plpgsql"
            )
            for table, columns in tables.items():
                create, drop = _postgresql(kind, epoch_table, table, columns)
                forward.append(create)
                backward.append(drop)
            backward.append(f"DROP FUNCTION IF EXISTS {function}()")
        else:
            for table, columns in tables.items():
                for event in ("INSERT", "UPDATE", "DELETE"):
                    create, drop = _sqlite(epoch_table, table, event, columns)
                    forward.append(create)
                    backward.append(drop)
    return forward, backward


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
