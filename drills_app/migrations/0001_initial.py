"""DrillRun, taken over from reconcile_app: Django's state only.

The table was created by reconcile_app's migration 0010 and keeps its name (`db_table`) and
its index's name, so this migration creates nothing: it runs after reconcile_app 0013 let go
of the model, on a fresh database and on an existing one alike. Its content type moves too,
so the permissions pointing at it stay valid instead of being left stale.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

MODELS = ("drillrun",)


def _relabel(old_label, new_label):
    def relabel(apps, schema_editor):
        content_type = apps.get_model("contenttypes", "ContentType")
        rows = content_type.objects.using(schema_editor.connection.alias)
        # A row already under the new label (a partial earlier run) wins; the old one stays.
        taken = rows.filter(app_label=new_label, model__in=MODELS).values_list("model", flat=True)
        rows.filter(app_label=old_label, model__in=MODELS).exclude(model__in=list(taken)).update(
            app_label=new_label
        )

    return relabel


CREATE_STATE = [
    migrations.CreateModel(
        name='DrillRun',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('kind', models.CharField(choices=[('drill', 'Drill'), ('drift_benchmark', 'Drift Benchmark')], max_length=20)),
            ('parameters', models.JSONField(blank=True, default=dict)),
            ('status', models.CharField(choices=[('running', 'Running'), ('complete', 'Complete'), ('failed', 'Failed')], db_index=True, default='running', max_length=10)),
            ('progress', models.JSONField(blank=True, default=dict)),
            ('results', models.JSONField(blank=True, default=dict)),
            ('passed', models.BooleanField(blank=True, null=True)),
            ('error', models.TextField(blank=True, default='')),
            ('started_at', models.DateTimeField()),
            ('finished_at', models.DateTimeField(blank=True, null=True)),
            ('started_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
        ],
        options={
            'db_table': 'reconcile_app_drillrun',
            'ordering': ['-started_at', '-id'],
            'indexes': [models.Index(fields=['kind', '-started_at'], name='reconcile_a_kind_0c8eac_idx')],
        },
    ),
]


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("reconcile_app", "0013_drill_runs_move_to_drills_app"),
        ("contenttypes", "0002_remove_content_type_name"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=CREATE_STATE, database_operations=[]),
        migrations.RunPython(
            _relabel("reconcile_app", "drills_app"), _relabel("drills_app", "reconcile_app")
        ),
    ]
