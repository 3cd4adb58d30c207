"""Operators' levers on effects: run a readback now, resolve by hand, and the sweep."""

from __future__ import annotations

from unittest.mock import patch

import pytest

from reconcile_app.models import AuditEvent, Effect, EvidenceEntry
from reconcile_app.services.effects import effects_sweep
from sandbox_app.services import sandbox_fault_add
from tests.reconcile_app.effects.conftest import commit, reconcile


@pytest.fixture
def unknown_effect(collectible, agent):
    snapshot = reconcile(agent)
    sandbox_fault_add(source="case-service", kind="timeout_after_commit", count=1)
    assert commit(agent, snapshot, "release_collections_hold", "released", "u-1").status_code == 202
    return "u-1"


def test_operator_resolves_an_unknown_outcome_with_a_reason(unknown_effect, operator):
    response = operator.post(
        f"/api/v1/effects/{unknown_effect}/resolve",
        {"outcome": "not_executed", "reason": "owner confirmed by phone"},
    )
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "not_executed"
    audit = AuditEvent.objects.get(action="effect.resolve")
    assert (audit.actor_name, audit.reason, audit.before, audit.after["status"]) == (
        operator.name,
        "owner confirmed by phone",
        {"status": "unknown"},
        "not_executed",
    )
    assert EvidenceEntry.objects.filter(note="manual resolution: owner confirmed by phone").exists()


def test_manual_resolution_needs_a_reason_and_an_operator(unknown_effect, operator, auditor, agent):
    no_reason = operator.post(
        f"/api/v1/effects/{unknown_effect}/resolve", {"outcome": "succeeded", "reason": ""}
    )
    assert no_reason.status_code == 400
    for persona in (auditor, agent):
        response = persona.post(
            f"/api/v1/effects/{unknown_effect}/resolve", {"outcome": "succeeded", "reason": "x"}
        )
        assert response.status_code == 403
    assert Effect.objects.get(idempotency_key=unknown_effect).status == "unknown"


def test_resolving_a_settled_effect_is_a_conflict(unknown_effect, operator):
    operator.post(
        f"/api/v1/effects/{unknown_effect}/resolve",
        {"outcome": "succeeded", "reason": "seen in the owner's console"},
    )
    again = operator.post(
        f"/api/v1/effects/{unknown_effect}/resolve",
        {"outcome": "not_executed", "reason": "changed my mind"},
    )
    assert (again.status_code, again.json()["code"]) == (409, "not_resolvable")


def test_run_readback_now_queues_a_resolution_for_unknown(
    unknown_effect, operator, eager_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = operator.client.post(f"/api/v1/effects/{unknown_effect}/readback")
    assert response.status_code == 202
    # The resolution asked the owner's ledger, found the receipt, and the readback verified it.
    assert Effect.objects.get(idempotency_key=unknown_effect).status == "verified"
    assert AuditEvent.objects.filter(action="effect.readback", object_ref=unknown_effect).exists()


def test_sweep_re_enqueues_lost_work(
    unknown_effect, eager_tasks, django_capture_on_commit_callbacks
):
    from datetime import timedelta

    from django.utils import timezone

    Effect.objects.filter(idempotency_key=unknown_effect).update(next_check_at=timezone.now())
    with django_capture_on_commit_callbacks(execute=True):
        counts = effects_sweep(now=timezone.now() + timedelta(seconds=1))
    assert counts["resolutions"] == 1
    assert Effect.objects.get(idempotency_key=unknown_effect).status == "verified"


def test_sweep_queues_a_resolution_that_never_ends_once_per_backoff(unknown_effect):
    # Its task lost or cut short at its time limit: nothing it would write is written.
    from datetime import timedelta

    from django.utils import timezone

    now = timezone.now()
    Effect.objects.filter(idempotency_key=unknown_effect).update(next_check_at=now)
    with patch("reconcile_app.tasks.effect_resolve_task.delay") as queued:
        first = effects_sweep(now=now + timedelta(seconds=1))
        again = effects_sweep(now=now + timedelta(seconds=31))  # the next sweep
        later = effects_sweep(now=now + timedelta(seconds=62))  # past the 60 s backoff
    assert (first["resolutions"], again["resolutions"], later["resolutions"]) == (1, 0, 1)
    assert queued.call_count == 2


def test_sweep_marks_a_sender_lost_mid_request_unknown(collectible, agent):
    from datetime import timedelta

    from django.utils import timezone

    snapshot = reconcile(agent)
    commit(agent, snapshot, "release_collections_hold", "released", "s-1")
    Effect.objects.filter(idempotency_key="s-1").update(
        status="sent", sent_at=timezone.now() - timedelta(minutes=5)
    )
    counts = effects_sweep()
    assert counts["sent_to_unknown"] == 1
    effect = Effect.objects.get(idempotency_key="s-1")
    assert effect.status == "unknown"
    # Seed 000: the ledger keeps "request sent; response not received", as for a timeout.
    entry = EvidenceEntry.objects.get(kind="tool_request", value__idempotency_key="s-1")
    assert entry.value == {"idempotency_key": "s-1", "outcome": "unknown"}
    assert entry.note.startswith("request sent; response not received")
    assert effect.events.get(kind="timeout").evidence_id == entry.evidence_id


def test_effect_list_filters_by_status(unknown_effect, operator, agent):
    listed = operator.client.get("/api/v1/effects", {"status": "unknown"}).json()
    assert [item["idempotency_key"] for item in listed["results"]] == [unknown_effect]
    assert operator.client.get("/api/v1/effects", {"status": "verified"}).json()["count"] == 0


def test_operator_escalates_an_unknown_outcome_to_its_owner(unknown_effect, operator, agent):
    response = operator.post(
        f"/api/v1/effects/{unknown_effect}/escalate", {"reason": "ledger unreachable for an hour"}
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["code"], body["effect_key"], body["owner"]) == (
        "effect_unknown",
        unknown_effect,
        "servicing-team",
    )
    again = operator.post(f"/api/v1/effects/{unknown_effect}/escalate", {"reason": "again"})
    assert again.json()["escalation_id"] == body["escalation_id"]
    assert AuditEvent.objects.filter(action="effect.escalate").count() == 1
    assert (
        agent.post(f"/api/v1/effects/{unknown_effect}/escalate", {"reason": "x"}).status_code == 403
    )


def test_manual_success_is_accepted_then_proven_by_a_readback(
    unknown_effect, operator, eager_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = operator.post(
            f"/api/v1/effects/{unknown_effect}/resolve",
            {"outcome": "succeeded", "reason": "seen in the owner's console"},
        )
    assert response.status_code == 200
    effect = Effect.objects.get(idempotency_key=unknown_effect)
    # The owner did commit (timeout after commit), so the readback proves the person right.
    assert effect.status == "verified"
    kinds = list(effect.events.values_list("kind", flat=True))
    assert kinds.index("manual_resolution") < kinds.index("readback")


def test_the_effects_agent_reads_which_person_escalated_its_effect(unknown_effect, operator, agent):
    # Only another agent's name is kept from an agent (docs/api.md, "Who reads what"): the
    # person who asked the owner about this agent's effect is the one to talk to.
    raised = operator.post(f"/api/v1/effects/{unknown_effect}/escalate", {"reason": "no answer"})
    escalation_id = raised.json()["escalation_id"]

    followed = agent.client.get(f"/api/v1/escalations/{escalation_id}")

    assert followed.status_code == 200, followed.content
    assert followed.json()["requested_by"] == raised.json()["requested_by"] == operator.name
