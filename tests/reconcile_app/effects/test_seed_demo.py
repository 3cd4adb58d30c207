"""Seed 000's demo and "the ambiguous commit", through the API."""

from __future__ import annotations

from reconcile_app.models import EvidenceEntry
from reconcile_app.services.evidence import evidence_append
from sandbox_app.models import SandboxEffect, SandboxRecord
from sandbox_app.services import sandbox_fault_add, sandbox_record_write
from tests.conftest import ago
from tests.reconcile_app.effects.conftest import SUBJECT, commit, reconcile


def state() -> SandboxRecord:
    return SandboxRecord.objects.get(
        source="case-service", subject=SUBJECT, field="collections_status"
    )


def test_concurrent_update_between_decision_and_commit_is_rejected(
    collectible, agent, django_capture_on_commit_callbacks
):
    snapshot = reconcile(agent)
    assert snapshot["decision"]["result"] == "allow"
    assert snapshot["fields"]["collections_status"]["version"] == 42
    sandbox_record_write(
        source="case-service", subject=SUBJECT, field="collections_status", value="manual_review"
    )  # out-of-band: version 43
    response = commit(agent, snapshot, "release_collections_hold", "released", "decision-9001")
    assert response.status_code == 412
    body = response.json()
    assert (body["code"], body["expected"], body["found"]) == ("version_changed", 42, 43)
    assert state().value == "manual_review"


def test_idempotent_retry_returns_the_same_receipt_and_readback_verifies(
    collectible, agent, eager_tasks, django_capture_on_commit_callbacks
):
    sandbox_record_write(
        source="case-service", subject=SUBJECT, field="collections_status", value="manual_review"
    )  # version 43
    # The contract requires evidence for the state it acts on: the caseworker's note.
    evidence_append(
        kind="observation",
        subject=SUBJECT,
        field="collections_status",
        value="manual_review",
        source="case-ledger",
        observed_at=ago(seconds=1),
    )
    snapshot = reconcile(agent, "retain_manual_review")
    assert snapshot["fields"]["collections_status"]["version"] == 43
    with django_capture_on_commit_callbacks(execute=True):
        first = commit(agent, snapshot, "retain_manual_review", "manual_review", "decision-9002")
    assert first.status_code == 201, first.content
    with django_capture_on_commit_callbacks(execute=True):
        retry = commit(agent, snapshot, "retain_manual_review", "manual_review", "decision-9002")
    assert retry.status_code == 200
    assert retry["Idempotent-Replayed"] == "true"
    assert retry.json()["receipt"]["receipt_id"] == first.json()["receipt"]["receipt_id"]
    assert retry.json()["receipt"]["resulting_version"] == 44
    detail = agent.client.get("/api/v1/effects/decision-9002").json()
    assert detail["status"] == "verified"
    readback = next(event for event in detail["timeline"] if event["kind"] == "readback")
    assert readback["detail"]["value"] == "manual_review"
    assert readback["detail"]["version"] == 44
    assert EvidenceEntry.objects.filter(
        kind="readback", evidence_id=readback["evidence_id"]
    ).exists()
    assert state().version == 44


def test_ambiguous_commit_resolves_to_the_receipt_and_charges_once(
    collectible, agent, eager_tasks, django_capture_on_commit_callbacks
):
    snapshot = reconcile(agent)
    sandbox_fault_add(source="case-service", kind="timeout_after_commit", count=1)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        lost = commit(agent, snapshot, "release_collections_hold", "released", "transfer-100")
    # The owner committed, the answer was lost: unknown, never "failed".
    assert lost.status_code == 202
    assert lost.json()["status"] == "unknown"
    assert callbacks, "a resolution was queued"
    effect = agent.client.get("/api/v1/effects/transfer-100").json()
    kinds = [event["kind"] for event in effect["timeline"]]
    assert kinds[:3] == ["recorded", "sent", "timeout"]
    assert "resolution" in kinds
    assert effect["status"] == "verified"
    with django_capture_on_commit_callbacks(execute=True):
        retry = commit(agent, snapshot, "release_collections_hold", "released", "transfer-100")
    assert retry.status_code == 200
    assert retry.json()["receipt"]["resulting_version"] == 43
    assert SandboxEffect.objects.filter(idempotency_key="transfer-100").count() == 1
    assert state().version == 43  # charged once
    note = EvidenceEntry.objects.get(kind="tool_request").note
    assert note == "request sent; response not received"
