import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("reconcile_app", "0022_bulk_job_sweep"),
    ]

    operations = [
        migrations.AddField(
            model_name="effect",
            name="last_check_error",
            field=models.CharField(blank=True, default="", max_length=500),
        ),
        migrations.AddField(
            model_name="effect",
            name="last_check_error_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="effect",
            name="compensates",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="compensations",
                to="reconcile_app.effect",
            ),
        ),
    ]
