"""A release migrates while the previous release's processes still run (docs/deploy.md, "A
release"): their inserts name only the columns they know. A NOT NULL column a migration adds to
an existing table therefore needs a default in the database, not only in Python (Django drops
the default it used to fill the existing rows): without one, every insert by the previous
release fails until its last process is gone. Seen in a rolling upgrade across 0028 and 0032:
an old web process answered 500 to a bulk job (`null value in column "cancel_reason"`) and to
a contract activation (`... "attempts"`).
"""

from __future__ import annotations

from django.apps import apps
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.operations import AddField, CreateModel
from django.db.models import NOT_PROVIDED
from django.utils import timezone

from reconcile_app.models import BulkJob, Contract, ContractActivation

OUR_APPS = ("reconcile_app", "lineage_app", "sandbox_app", "drills_app")

# Columns added before rolling upgrades were checked, each already in every release a rolling
# upgrade starts from today. A column added from now on is not listed here: give it a db_default.
ADDED_BEFORE_THE_RULE = frozenset(
    {
        ("reconcile_app", "source", "fact_keys"),
        ("reconcile_app", "source", "mode"),
        ("reconcile_app", "contract", "status"),
        ("reconcile_app", "contract", "level"),
        ("reconcile_app", "contradiction", "signature"),
        ("reconcile_app", "effect", "approved_by"),
        ("reconcile_app", "escalation", "conflict_key"),
        ("reconcile_app", "claimverdict", "memory_id"),
        ("reconcile_app", "bulkjob", "heartbeat_at"),
        ("reconcile_app", "bulkjob", "requeues"),
        ("reconcile_app", "effect", "last_check_error"),
    }
)


def added_not_null_columns() -> list[tuple[str, str, str, str]]:
    """(app, model, field, migration) for each NOT NULL column added to a table that an
    earlier migration created."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    found = []
    for (app, name), migration in sorted(loader.disk_migrations.items()):
        if app not in OUR_APPS:
            continue
        created_here = {op.name_lower for op in migration.operations if isinstance(op, CreateModel)}
        for op in migration.operations:
            if not isinstance(op, AddField) or op.model_name_lower in created_here:
                continue
            if op.field.null or op.field.many_to_many:
                continue
            found.append((app, op.model_name_lower, op.name_lower, name))
    return found


def test_every_added_not_null_column_has_a_database_default():
    missing = [
        f"{app}.{model}.{field} (added by {migration})"
        for app, model, field, migration in added_not_null_columns()
        if (app, model, field) not in ADDED_BEFORE_THE_RULE
        and apps.get_model(app, model)._meta.get_field(field).db_default is NOT_PROVIDED
    ]
    assert missing == []


def test_an_insert_naming_only_the_previous_release_columns_succeeds(estate):
    """The previous release's inserts of a bulk job, its item and an activation, with the columns its
    ORM named (as the failing rows of the rolling upgrade showed them)."""
    contract = Contract.objects.order_by("pk").first()
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO reconcile_app_bulkjob (job_id, kind, action, outcome, reason, selection,"
            " status, count, done, failed, skipped, created_by_name, request_id, created_at,"
            " heartbeat_at, requeues) VALUES ('job_old', 'effects', 'readback', '', 'r', '{}',"
            " 'running', 0, 0, 0, 0, 'old', '', %s, %s, 0)",
            [now, now],
        )
        cursor.execute(
            "INSERT INTO reconcile_app_bulkjobitem (job_id, position, ref, state, before, after,"
            " detail) SELECT id, 0, 'effect-1', 'pending', '', '', '' FROM reconcile_app_bulkjob"
            " WHERE job_id = 'job_old'"
        )
        cursor.execute(
            "INSERT INTO reconcile_app_contractactivation (activation_id, contract_id, status,"
            " requested_by_name, rationale, request_id, level, gates, replaced_version, detail,"
            " requested_at) VALUES ('act_old', %s, 'running', 'old', 'r', '', 'reconstruct',"
            " '[]', '', '', %s)",
            [contract.pk, now],
        )
    job = BulkJob.objects.get(job_id="job_old")
    assert (job.still_unknown, job.cancel_reason, job.cancelled_by_name) == (0, "", "")
    assert job.items.get().selected_status == ""
    assert ContractActivation.objects.get(activation_id="act_old").attempts == 0
