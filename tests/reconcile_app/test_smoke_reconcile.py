from __future__ import annotations

from datetime import timedelta

from reconcile_app.services.evidence import evidence_append
from sandbox_app.services import sandbox_record_write
from tests.conftest import COLLECTIONS


def test_reconcile_returns_typed_snapshot(estate, agent, now):
    sandbox_record_write(
        source="case-service",
        subject="account-17",
        field="collections_status",
        value="hold",
        version=42,
        valid_from=now - timedelta(minutes=20),
    )
    evidence_append(
        kind="observation",
        subject="account-17",
        field="collections_status",
        value="hold",
        source="case-ledger",
        observed_at=now - timedelta(minutes=20),
        evidence_id="ev-002",
    )
    response = agent.post(
        "/api/v1/reconcile",
        {
            "subject": "account-17",
            "purpose": "collections",
            "decision_class": COLLECTIONS,
            "proposed_action": "release_collections_hold",
        },
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["snapshot_id"].startswith("snap_")
    assert body["decision"]["result"] == "deny"
    assert body["fields"]["collections_status"]["version"] == 42
    assert body["fields"]["collections_status"]["evidence"] == ["ev-002"]
