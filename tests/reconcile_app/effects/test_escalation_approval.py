"""A reviewer's approval authorises (docs/api.md, effects): an `escalate` snapshot commits
exactly its proposed action once its escalation is approved, within the commit window counted
from the approval; pending and rejected escalations refuse with their own codes; retries of
the same reconcile join one escalation instead of opening more."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from reconcile_app.models import Contradiction, Effect, Escalation
from reconcile_app.services.effect_escalations import escalation_open_for_effect
from reconcile_app.services.evidence import evidence_append
from sandbox_app.models import SandboxRecord
from sandbox_app.services import sandbox_record_write
from tests.conftest import ago
from tests.reconcile_app.effects.conftest import SUBJECT, commit, reconcile

ESCALATIONS = "/api/v1/escalations"


@pytest.fixture
def complaint_open(collectible):
    """account-17 is collectible but has an open complaint: the contract escalates."""
    sandbox_record_write(
        source="complaints-service",
        subject=SUBJECT,
        field="complaint_status",
        value="open",
        valid_from=ago(minutes=5),
    )


def escalated(agent, action: str = "retain_manual_review", **extra: Any) -> dict[str, Any]:
    body = reconcile(agent, action) if not extra else _reconcile_with(agent, action, **extra)
    assert body["decision"]["result"] == "escalate", body["decision"]
    assert body["escalation_id"], body
    return body


def _reconcile_with(agent, action: str, **extra: Any) -> dict[str, Any]:
    response = agent.post(
        "/api/v1/reconcile",
        {
            "subject": SUBJECT,
            "purpose": "collections",
            "decision_class": "collections-contact-release",
            "proposed_action": action,
            **extra,
        },
    )
    assert response.status_code == 201, response.content
    return response.json()


def decide(reviewer, escalation_id: str, verb: str = "approve"):
    response = reviewer.post(
        f"{ESCALATIONS}/{escalation_id}/{verb}", {"rationale": "complaint is about fees only"}
    )
    assert response.status_code == 200, response.content
    return response.json()


def owner_value() -> Any:
    return SandboxRecord.objects.get(subject=SUBJECT, field="collections_status").value


def test_pending_escalation_refuses_with_its_id(complaint_open, agent):
    snapshot = escalated(agent)
    assert snapshot["actions"] == {}
    response = commit(agent, snapshot, "retain_manual_review", "manual_review", "k-pending")
    assert response.status_code == 403
    assert response.json()["code"] == "escalation_pending"
    assert response.json()["escalation_id"] == snapshot["escalation_id"]
    assert not Effect.objects.exists()


def test_rejected_escalation_refuses(complaint_open, agent, reviewer):
    snapshot = escalated(agent)
    decide(reviewer, snapshot["escalation_id"], "reject")
    response = commit(agent, snapshot, "retain_manual_review", "manual_review", "k-rejected")
    assert (response.status_code, response.json()["code"]) == (403, "escalation_rejected")
    assert agent.get(f"/api/v1/escalations/{snapshot['escalation_id']}").json()["status"] == (
        "rejected"
    )
    assert not Effect.objects.exists()


def test_approval_authorises_exactly_the_proposed_action(complaint_open, agent, reviewer):
    snapshot = escalated(agent)
    decision = decide(reviewer, snapshot["escalation_id"])
    assert (decision["status"], decision["write_allowed"]) == ("approved", True)

    # The agent learns the outcome from the escalation, and how to act from the snapshot.
    assert agent.get(f"{ESCALATIONS}/{snapshot['escalation_id']}").json()["status"] == "approved"
    actions = agent.get(f"/api/v1/snapshots/{snapshot['snapshot_id']}").json()["actions"]
    assert list(actions) == ["retain_manual_review"]
    assert actions["retain_manual_review"]["if_match"] == '"42"'

    other = commit(agent, snapshot, "release_collections_hold", "released", "k-other")
    assert (other.status_code, other.json()["code"]) == (403, "decision_not_allowed")

    response = commit(agent, snapshot, "retain_manual_review", "manual_review", "k-approved")
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["status"], body["escalation_id"], body["approved_by"]) == (
        "accepted",
        snapshot["escalation_id"],
        "rhys-reviewer",
    )
    assert owner_value() == "manual_review"
    effect = Effect.objects.get(idempotency_key="k-approved")
    recorded = effect.events.get(kind="recorded")
    assert recorded.detail["approved_by"] == "rhys-reviewer"
    shown = agent.get("/api/v1/effects/k-approved").json()
    assert (shown["escalation_id"], shown["approved_by"]) == (
        snapshot["escalation_id"],
        "rhys-reviewer",
    )


def test_an_allowed_effect_names_no_approval(collectible, agent):
    snapshot = reconcile(agent, "retain_manual_review")
    body = commit(agent, snapshot, "retain_manual_review", "manual_review", "k-allowed").json()
    assert (body["escalation_id"], body["approved_by"]) == (None, None)


def test_the_window_counts_from_the_approval(complaint_open, agent, reviewer, monkeypatch):
    snapshot = escalated(agent)
    issued = timezone.now()

    def clock_at(moment):
        monkeypatch.setattr(timezone, "now", lambda: moment)

    # Approved an hour later: an allow would long have expired, but the window opens now.
    clock_at(issued + timedelta(hours=1))
    decide(reviewer, snapshot["escalation_id"])
    deadline = agent.get(f"/api/v1/snapshots/{snapshot['snapshot_id']}").json()["actions"][
        "retain_manual_review"
    ]["commit_deadline"]
    assert deadline.startswith((issued + timedelta(hours=1, seconds=120)).isoformat()[:16])
    assert (
        commit(agent, snapshot, "retain_manual_review", "manual_review", "k-in").status_code == 201
    )

    clock_at(issued + timedelta(hours=1, seconds=125))
    late = commit(agent, snapshot, "retain_manual_review", "manual_review", "k-late")
    assert (late.status_code, late.json()["code"]) == (412, "snapshot_expired")
    assert "approved" in late.json()["detail"]


def test_approval_does_not_lend_the_snapshot_to_another_principal(
    complaint_open, agent, reviewer, operator
):
    snapshot = escalated(agent)
    decide(reviewer, snapshot["escalation_id"])
    response = commit(operator, snapshot, "retain_manual_review", "manual_review", "k-op")
    assert (response.status_code, response.json()["code"]) == (403, "decision_not_allowed")


def test_a_bound_value_stays_bound_after_approval(complaint_open, agent, reviewer):
    snapshot = escalated(agent, proposed_value="manual_review")
    decide(reviewer, snapshot["escalation_id"])
    response = commit(agent, snapshot, "retain_manual_review", "released", "k-bound")
    assert (response.status_code, response.json()["code"]) == (403, "effect_not_bound")


def test_retries_join_one_escalation(complaint_open, agent, reviewer):
    first = escalated(agent)
    retries = [escalated(agent) for _ in range(4)]
    assert {retry["escalation_id"] for retry in retries} == {first["escalation_id"]}
    assert Escalation.objects.filter(status="open").count() == 1
    escalation = Escalation.objects.get()
    assert escalation.joined_snapshots.count() == 4

    # Another question (another proposed action) is another escalation.
    other = escalated(agent, "release_collections_hold")
    assert other["escalation_id"] != first["escalation_id"]

    # Approved: a retry just after it joins the decided escalation and may act on it.
    decide(reviewer, first["escalation_id"])
    again = escalated(agent)
    assert again["escalation_id"] == first["escalation_id"]
    assert list(again["actions"]) == ["retain_manual_review"]
    assert commit(agent, again, "retain_manual_review", "manual_review", "k-retry").status_code == (
        201
    )


def test_a_retry_after_the_decision_window_opens_a_new_question(complaint_open, agent, reviewer):
    first = escalated(agent)
    decide(reviewer, first["escalation_id"], "reject")
    Escalation.objects.filter(escalation_id=first["escalation_id"]).update(
        decided_at=timezone.now() - timedelta(seconds=121)
    )
    later = escalated(agent)
    assert later["escalation_id"] != first["escalation_id"]


def test_contradiction_retries_add_no_rows(collectible, agent):
    evidence_append(
        kind="observation",
        subject=SUBJECT,
        field="collections_status",
        value="hold",
        source="hardship-desk",
        observed_at=ago(minutes=5),
        evidence_id="ev-desk",
    )
    first = escalated(agent)
    for _ in range(5):
        assert escalated(agent)["escalation_id"] == first["escalation_id"]
    assert Escalation.objects.count() == 1
    assert Contradiction.objects.filter(status="open").count() == 1


def test_the_effects_escalation_never_approves_its_snapshot(collectible, agent, operator):
    """An operator's escalation of an unproven effect names the effect's snapshot; it is a
    question about the effect, not an approval of the snapshot."""
    snapshot = reconcile(agent, "retain_manual_review")
    assert commit(agent, snapshot, "retain_manual_review", "manual_review", "k-1").status_code == (
        201
    )
    Effect.objects.filter(idempotency_key="k-1").update(status="unknown")
    escalation = escalation_open_for_effect(
        idempotency_key="k-1", actor=operator.user, reason="owner does not answer"
    )
    assert escalation.snapshot.snapshot_id == snapshot["snapshot_id"]
    shown = agent.get(f"/api/v1/snapshots/{snapshot['snapshot_id']}").json()
    assert shown["escalation_id"] is None
    assert list(shown["actions"]) == ["release_collections_hold", "retain_manual_review"]


def test_another_principal_asking_the_same_opens_its_own_question(complaint_open, agent):
    from tests.conftest import make_agent

    twin = make_agent("twin-agent", ["collections-contact-release:retain_manual_review"])
    mine, theirs = escalated(agent), escalated(twin)
    assert mine["escalation_id"] != theirs["escalation_id"]
    # Each reads the escalation it waits on, and not the other's.
    assert twin.get(f"{ESCALATIONS}/{theirs['escalation_id']}").status_code == 200
    assert twin.get(f"{ESCALATIONS}/{mine['escalation_id']}").status_code == 404


def test_a_retry_after_the_decision_acts_only_at_the_state_the_reviewer_saw(
    complaint_open, agent, reviewer
):
    """One approval, one state: after the approved snapshot's commit moved the record on, a
    retry that joins the decided escalation learns the outcome but authorises nothing."""
    first = escalated(agent)
    decide(reviewer, first["escalation_id"])
    done = commit(agent, first, "retain_manual_review", "manual_review", "k-approved")
    assert done.status_code == 201, done.content
    later = escalated(agent)  # reads the version the commit wrote
    assert later["escalation_id"] == first["escalation_id"]
    assert later["actions"] == {}  # the reviewer never saw this state
    response = commit(agent, later, "retain_manual_review", "manual_review", "k-second")
    assert (response.status_code, response.json()["code"]) == (403, "approved_state_moved")
    assert response.json()["approved_snapshot_id"] == first["snapshot_id"]
    assert Effect.objects.count() == 1


def test_a_retry_joined_before_the_decision_acts_only_at_the_state_the_reviewer_saw(
    complaint_open, agent, reviewer
):
    """The record moved while the question was open; the reviewer approved what the page
    showed (the escalation's own snapshot): the retry that read the new state commits
    nothing."""
    first = escalated(agent)
    assert first["fields"]["collections_status"]["value"] == "collect"
    sandbox_record_write(
        source="case-service",
        subject=SUBJECT,
        field="collections_status",
        value="payment_plan",
        valid_from=ago(seconds=5),
    )
    evidence_append(
        kind="observation",
        subject=SUBJECT,
        field="collections_status",
        value="payment_plan",
        source="case-ledger",
        observed_at=ago(seconds=5),
    )
    retry = escalated(agent)
    assert retry["escalation_id"] == first["escalation_id"]
    assert retry["fields"]["collections_status"]["value"] == "payment_plan"

    decide(reviewer, first["escalation_id"])

    shown = agent.get(f"/api/v1/snapshots/{retry['snapshot_id']}").json()
    assert shown["actions"] == {}
    response = commit(agent, retry, "retain_manual_review", "manual_review", "k-joined-early")
    assert (response.status_code, response.json()["code"]) == (403, "approved_state_moved")
    assert not Effect.objects.exists()
