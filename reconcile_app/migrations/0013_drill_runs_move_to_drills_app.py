"""DrillRun moves to drills_app: Django's state only.

The table stays, under its name, with its rows and index; drills_app's 0001 takes the model
over in the state. No database operation runs here, in either direction.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("reconcile_app", "0012_sandbox_moves_to_sandbox_app")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="DrillRun")],
            database_operations=[],
        )
    ]
