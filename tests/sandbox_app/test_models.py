"""The sandbox's idempotency ledger stays append-only after the move to sandbox_app: the
application refuses changes, and on PostgreSQL the trigger of reconcile_app 0009 still does."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from reconcile_app.models.append_only import AppendOnlyViolation
from sandbox_app.models import SandboxEffect


def _receipt() -> SandboxEffect:
    return SandboxEffect.objects.create(
        source="case-service", idempotency_key="k-ledger", fingerprint="f", receipt={"a": 1}
    )


@pytest.mark.django_db
def test_the_application_refuses_to_rewrite_a_receipt():
    effect = _receipt()
    effect.applied = False
    with pytest.raises(AppendOnlyViolation):
        effect.save()
    with pytest.raises(AppendOnlyViolation):
        SandboxEffect.objects.filter(pk=effect.pk).update(applied=False)
    with pytest.raises(AppendOnlyViolation):
        SandboxEffect.objects.all().delete()
    assert SandboxEffect.objects.get(pk=effect.pk).applied is True


@pytest.mark.skipif(connection.vendor != "postgresql", reason="triggers are PostgreSQL's")
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "statement",
    [
        f"UPDATE {SandboxEffect._meta.db_table} SET applied = false",
        f"DELETE FROM {SandboxEffect._meta.db_table}",
        f"TRUNCATE {SandboxEffect._meta.db_table}",
    ],
)
def test_postgresql_refuses_raw_sql_changes_to_the_ledger(statement):
    _receipt()
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(statement)
    assert SandboxEffect.objects.get(idempotency_key="k-ledger").applied is True
