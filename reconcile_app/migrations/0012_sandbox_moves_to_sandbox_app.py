"""The sandbox owner system's models move to sandbox_app: Django's state only.

Their tables stay, under their names, with their rows, indexes and (on PostgreSQL) the
append-only trigger of 0009; sandbox_app's 0001 takes them over in the state. No database
operation runs here, in either direction.
"""

from django.db import migrations

MOVED = ("SandboxAuthority", "SandboxEffect", "SandboxEvent", "SandboxFault", "SandboxRecord")


class Migration(migrations.Migration):
    dependencies = [("reconcile_app", "0011_contract_status_and_action_values")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name=name) for name in MOVED],
            database_operations=[],
        )
    ]
