"""Append-only, enforced: the application refuses everywhere, PostgreSQL refuses by trigger."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from reconcile_app.models import AuditEvent, EvidenceEntry
from reconcile_app.models.append_only import AppendOnlyViolation
from reconcile_app.services.evidence import evidence_append
from tests.conftest import ago


@pytest.fixture
def entry(db):
    return evidence_append(
        kind="observation",
        subject="s",
        field="f",
        value=1,
        source="x",
        observed_at=ago(minutes=1),
        evidence_id="ev-ao",
    )


def test_the_application_refuses_update_and_delete(entry):
    entry.value = 2
    with pytest.raises(AppendOnlyViolation):
        entry.save()
    with pytest.raises(AppendOnlyViolation):
        entry.delete()
    with pytest.raises(AppendOnlyViolation):
        EvidenceEntry.objects.filter(pk=entry.pk).update(value=3)
    with pytest.raises(AppendOnlyViolation):
        AuditEvent.objects.all().delete()
    assert EvidenceEntry.objects.get(pk=entry.pk).value == 1


@pytest.mark.skipif(connection.vendor != "postgresql", reason="triggers are PostgreSQL's")
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE reconcile_app_evidenceentry SET value = '2'",
        "DELETE FROM reconcile_app_evidenceentry",
        "TRUNCATE reconcile_app_evidenceentry CASCADE",
        "UPDATE reconcile_app_auditevent SET reason = 'rewritten'",
        "DELETE FROM reconcile_app_auditevent",
    ],
)
def test_postgresql_refuses_raw_sql_changes(statement):
    from django.core.management import call_command

    evidence_append(
        kind="observation",
        subject="s",
        field="f",
        value=1,
        source="x",
        observed_at=ago(minutes=1),
        evidence_id="ev-raw",
    )
    call_command("create_principal", "raw-sql-agent")  # writes an audit row
    audited = AuditEvent.objects.count()  # that one, and the memory classes' loading
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(statement)
    assert EvidenceEntry.objects.get(evidence_id="ev-raw").value == 1
    assert AuditEvent.objects.filter(reason="rewritten").count() == 0
    assert AuditEvent.objects.count() == audited
    assert AuditEvent.objects.filter(action="principal.create").count() == 1


@pytest.mark.skipif(connection.vendor != "postgresql", reason="triggers are PostgreSQL's")
@pytest.mark.django_db
def test_every_append_only_table_carries_both_refusal_triggers():
    """Each migration that creates an append-only table installs the refusal (migration
    0009's list, then every later one through reconcile_app/append_only_triggers.py)."""
    from django.apps import apps

    from reconcile_app.models.append_only import AppendOnlyModel

    tables = sorted(
        model._meta.db_table
        for model in apps.get_models()
        if issubclass(model, AppendOnlyModel) and not model._meta.proxy
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tgrelid::regclass::text, tgname FROM pg_trigger "
            "WHERE tgname LIKE '%%_no_change' OR tgname LIKE '%%_no_truncate'"
        )
        found = set(cursor.fetchall())
    missing = [
        (table, f"{table}_{suffix}")
        for table in tables
        for suffix in ("no_change", "no_truncate")
        if (table, f"{table}_{suffix}") not in found
    ]
    assert "reconcile_app_reconciletiming" in tables
    assert missing == []
