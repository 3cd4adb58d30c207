"""verify_ledger: the evidence hash chain, and what tampering it detects."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, transaction

from reconcile_app.models import DecisionSnapshot, EvidenceEntry
from tests.conftest import ago
from tests.factories import EvidenceFactory
from tests.reconcile_app.effects.conftest import (  # noqa: F401
    account_goes_on_hold,
    collectible,
    reconcile,
)
from tests.reconcile_app.tamper import snapshot_content_rewrite


def verify() -> str:
    out = StringIO()
    call_command("verify_ledger", stdout=out, stderr=StringIO())
    return out.getvalue()


def raw_sql(sql: str, params: list) -> None:
    """Change the ledger behind the application's back, as someone with database access."""
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # Step around any append-only trigger, as a database superuser could.
            cursor.execute("SET LOCAL session_replication_role = replica")
            sql = sql.replace("value = %s", "value = %s::jsonb")
        cursor.execute(sql, params)


@pytest.fixture
def ledger(db, now):
    EvidenceFactory(evidence_id="ev-001", value="collect")
    EvidenceFactory(evidence_id="ev-002", value="hold")
    EvidenceFactory(evidence_id="ev-003", value="hold", field="complaint_status")


def test_verify_ledger_passes_on_an_untouched_chain(ledger):
    assert "ledger ok: 3 entries" in verify()


def test_verify_ledger_passes_untouched_snapshots(collectible, agent):
    reconcile(agent)
    assert "snapshots ok: 1, each matching its hash" in verify()


def test_verify_ledger_detects_one_changed_byte(ledger):
    raw_sql(
        "UPDATE reconcile_app_evidenceentry SET value = %s WHERE evidence_id = %s",
        ['"holx"', "ev-002"],
    )
    assert EvidenceEntry.objects.get(evidence_id="ev-002").value == "holx"

    with pytest.raises(CommandError, match="verification failed"):
        verify()


def test_verify_ledger_detects_a_removed_entry(ledger):
    raw_sql("DELETE FROM reconcile_app_evidenceentry WHERE evidence_id = %s", ["ev-003"])
    with pytest.raises(CommandError):
        verify()


def test_verify_ledger_detects_a_rewritten_time(ledger):
    raw_sql(
        "UPDATE reconcile_app_evidenceentry SET observed_at = %s WHERE evidence_id = %s",
        ["2020-01-01 00:00:00", "ev-001"],
    )
    with pytest.raises(CommandError):
        verify()


@pytest.mark.parametrize("value", [1e20, {"amount": 123456789012345678.0}, [0.5, -0.0, 2.0]])
def test_verify_ledger_passes_for_entries_with_any_json_number(db, agent, now, value):
    """An honest entry must verify on every database, whatever number it carries."""
    response = agent.post(
        "/api/v1/evidence",
        {
            "kind": "observation",
            "subject": "account-17",
            "field": "balance",
            "value": value,
            "source": "case-ledger",
            "observed_at": now.isoformat(),
        },
    )
    assert response.status_code == 201, response.content
    assert "ledger ok: 1 entries" in verify()


def test_verify_ledger_detects_an_edited_snapshot_and_names_it(collectible, agent):
    """A snapshot's outcome rewritten in SQL (its id and hash left as issued) is what a
    restored database must be checked for too: the commit gate and replay read it."""
    account_goes_on_hold(observed_at=ago(minutes=1))
    snapshot_id = reconcile(agent, "retain_manual_review")["snapshot_id"]
    content = DecisionSnapshot.objects.get(snapshot_id=snapshot_id).content
    content["decision"] = {**content["decision"], "result": "allow"}
    snapshot_content_rewrite(snapshot_id, content)

    err = StringIO()
    with pytest.raises(CommandError, match="1 problem"):
        call_command("verify_ledger", stdout=StringIO(), stderr=err)
    assert f"{snapshot_id}: content does not match its hash" in err.getvalue()
