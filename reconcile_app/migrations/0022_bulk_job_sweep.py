import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    # A bulk job's liveness, so the sweep can re-queue one whose task was lost.

    dependencies = [
        ("reconcile_app", "0021_reconcile_timing"),
    ]

    operations = [
        migrations.AddField(
            model_name="bulkjob",
            name="heartbeat_at",
            field=models.DateTimeField(default=django.utils.timezone.now),
        ),
        migrations.AddField(
            model_name="bulkjob",
            name="requeues",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddIndex(
            model_name="bulkjob",
            index=models.Index(fields=["status", "heartbeat_at"], name="bulk_job_liveness"),
        ),
    ]
