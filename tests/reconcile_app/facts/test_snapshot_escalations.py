"""Reconcile decisions with result `escalate` open an escalation bound to their snapshot."""

from __future__ import annotations

from datetime import timedelta

import pytest

from reconcile_app.models import Escalation
from reconcile_app.services.evidence import evidence_append
from sandbox_app.services import sandbox_record_write
from tests.conftest import COLLECTIONS, ago


@pytest.fixture
def collectible(estate):
    sandbox_record_write(
        source="case-service",
        subject="account-9",
        field="collections_status",
        value="collect",
        version=7,
        valid_from=ago(hours=2),
    )
    evidence_append(
        kind="observation",
        subject="account-9",
        field="collections_status",
        value="collect",
        source="case-ledger",
        observed_at=ago(hours=2),
    )


def reconcile(agent):
    return agent.post(
        "/api/v1/reconcile",
        {
            "subject": "account-9",
            "purpose": "collections",
            "decision_class": COLLECTIONS,
            "proposed_action": "release_collections_hold",
        },
    )


def test_policy_escalation_opens_an_escalation_for_the_snapshot(collectible, agent):
    sandbox_record_write(
        source="complaints-service", subject="account-9", field="complaint_status", value="open"
    )
    body = reconcile(agent).json()
    assert body["decision"]["result"] == "escalate"
    escalation = Escalation.objects.get(escalation_id=body["escalation_id"])
    assert escalation.snapshot.snapshot_id == body["snapshot_id"]
    assert escalation.code == "open_complaint"
    assert escalation.owner == "servicing-team"  # owner of the required field's source
    assert escalation.requested_by == agent.principal
    detail = agent.client.get(f"/api/v1/snapshots/{body['snapshot_id']}").json()
    assert detail["escalation_id"] == body["escalation_id"]


def test_contradiction_escalates_with_both_refs(collectible, agent):
    sandbox_record_write(
        source="complaints-service", subject="account-9", field="complaint_status", value="none"
    )
    evidence_append(
        kind="observation",
        subject="account-9",
        field="collections_status",
        value="hold",
        source="hardship-desk",
        observed_at=ago(minutes=5),
        evidence_id="ev-desk",
    )
    body = reconcile(agent).json()
    assert body["decision"]["result"] == "escalate"
    assert [r["code"] for r in body["decision"]["reasons"]] == ["contradiction"]
    escalation = Escalation.objects.get(escalation_id=body["escalation_id"])
    assert escalation.candidate_refs == [body["snapshot_id"], "ev-desk"]


def test_allow_and_deny_open_no_escalation(collectible, agent):
    sandbox_record_write(
        source="complaints-service", subject="account-9", field="complaint_status", value="none"
    )
    body = reconcile(agent).json()
    assert body["decision"]["result"] == "allow"
    assert body["escalation_id"] is None
    assert not Escalation.objects.exists()


def test_reviewer_decides_a_snapshot_escalation(collectible, agent, reviewer):
    sandbox_record_write(
        source="complaints-service",
        subject="account-9",
        field="complaint_status",
        value="open",
        valid_from=ago(minutes=1) - timedelta(seconds=1),
    )
    escalation_id = reconcile(agent).json()["escalation_id"]
    response = reviewer.post(
        f"/api/v1/escalations/{escalation_id}/reject",
        {"rationale": "complaint must be closed first"},
    )
    assert response.status_code == 200
    assert response.json()["status"] == "rejected"
