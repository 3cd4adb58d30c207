"""The sandbox's models, taken over from reconcile_app: Django's state only.

The tables were created by reconcile_app's migrations 0001-0007 and keep their names
(`db_table`), so this migration creates nothing: it runs after reconcile_app 0012 let go of
the models, on a fresh database and on an existing one alike. Their content types move too,
so the permissions pointing at them stay valid instead of being left stale.
"""

from django.db import migrations, models

MODELS = ("sandboxauthority", "sandboxeffect", "sandboxevent", "sandboxfault", "sandboxrecord")


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
        name='SandboxFault',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('source', models.SlugField(max_length=100)),
            ('kind', models.CharField(choices=[('unavailable', 'Unavailable'), ('latency', 'Latency'), ('timeout_after_commit', 'Timeout After Commit'), ('lag', 'Lag'), ('drop_postcondition', 'Drop Postcondition'), ('duplicate_delivery', 'Duplicate Delivery'), ('reorder', 'Reorder')], max_length=30)),
            ('remaining', models.PositiveIntegerField(blank=True, null=True)),
            ('seconds', models.PositiveIntegerField(default=0)),
            ('created_at', models.DateTimeField(auto_now_add=True)),
        ],
        options={
            'db_table': 'reconcile_app_sandboxfault',
            'ordering': ['created_at', 'id'],
        },
    ),
    migrations.CreateModel(
        name='SandboxAuthority',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('source', models.SlugField(max_length=100)),
            ('fact_key', models.CharField(max_length=200)),
            ('owner', models.CharField(blank=True, default='', max_length=200)),
            ('source_revision', models.CharField(blank=True, default='', max_length=200)),
            ('updated_at', models.DateTimeField(auto_now=True)),
        ],
        options={
            'db_table': 'reconcile_app_sandboxauthority',
            'ordering': ['source', 'fact_key'],
            'constraints': [models.UniqueConstraint(fields=('source', 'fact_key'), name='sandbox_authority_unique')],
        },
    ),
    migrations.CreateModel(
        name='SandboxEffect',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('source', models.SlugField(max_length=100)),
            ('idempotency_key', models.CharField(max_length=200)),
            ('fingerprint', models.CharField(max_length=64)),
            ('receipt', models.JSONField()),
            ('applied', models.BooleanField(default=True)),
            ('created_at', models.DateTimeField(auto_now_add=True)),
        ],
        options={
            'db_table': 'reconcile_app_sandboxeffect',
            'ordering': ['source', 'created_at'],
            'constraints': [models.UniqueConstraint(fields=('source', 'idempotency_key'), name='sandbox_effect_key_unique')],
        },
    ),
    migrations.CreateModel(
        name='SandboxEvent',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('source', models.SlugField(max_length=100)),
            ('event_id', models.CharField(max_length=100)),
            ('seq', models.BigIntegerField()),
            ('type', models.CharField(max_length=60)),
            ('subject', models.CharField(db_index=True, max_length=200)),
            ('field', models.CharField(blank=True, default='', max_length=150)),
            ('value', models.JSONField(blank=True, null=True)),
            ('valid_from', models.DateTimeField()),
            ('recorded_at', models.DateTimeField()),
        ],
        options={
            'db_table': 'reconcile_app_sandboxevent',
            'ordering': ['source', 'seq', 'id'],
            'constraints': [models.UniqueConstraint(fields=('source', 'event_id'), name='sandbox_event_unique')],
        },
    ),
    migrations.CreateModel(
        name='SandboxRecord',
        fields=[
            ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
            ('source', models.SlugField(max_length=100)),
            ('subject', models.CharField(max_length=200)),
            ('field', models.CharField(max_length=150)),
            ('value', models.JSONField(null=True)),
            ('version', models.PositiveBigIntegerField()),
            ('valid_from', models.DateTimeField()),
            ('recorded_at', models.DateTimeField()),
        ],
        options={
            'db_table': 'reconcile_app_sandboxrecord',
            'ordering': ['source', 'subject', 'field'],
            'constraints': [models.UniqueConstraint(fields=('source', 'subject', 'field'), name='sandbox_record_unique')],
        },
    ),
]


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("reconcile_app", "0012_sandbox_moves_to_sandbox_app"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=CREATE_STATE, database_operations=[]),
        migrations.RunPython(
            _relabel("reconcile_app", "sandbox_app"), _relabel("sandbox_app", "reconcile_app")
        ),
    ]
