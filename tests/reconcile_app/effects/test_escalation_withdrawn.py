"""An effect's escalation asks its owner whether the effect happened. Once a readback or a
resolution proves the answer, the question no longer stands: the escalation is withdrawn
(audited, out of the reviewers' queue), not left open for a decision that could only repeat
what the evidence says."""

from __future__ import annotations

import pytest

from reconcile_app.models import AuditEvent, Escalation
from reconcile_app.services.effects import effect_resolve_unknown
from tests.reconcile_app.console.conftest import signed_in
from tests.reconcile_app.effects.test_operator_actions import unknown_effect  # noqa: F401
from tests.reconcile_app.effects.test_resolution_evidence import never_executed  # noqa: F401


def escalate(operator, key: str) -> str:
    raised = operator.post(f"/api/v1/effects/{key}/escalate", {"reason": "owner silent"})
    assert raised.status_code == 201, raised.content
    return raised.json()["escalation_id"]


def assert_withdrawn(reader, escalation_id: str, settled: str) -> dict:
    body = reader.client.get(f"/api/v1/escalations/{escalation_id}").json()
    assert body["status"] == "withdrawn", body
    assert body["decided_at"] is not None and body["decided_by"] is None
    assert settled in body["rationale"]
    audit = AuditEvent.objects.get(action="escalation.withdraw", object_ref=escalation_id)
    assert audit.after == {"status": "withdrawn", "effect": body["effect_key"]}
    return body


def test_a_readback_proving_the_effect_withdraws_its_escalation(
    unknown_effect,
    operator,
    reviewer,
    auditor,
    eager_tasks,
    django_capture_on_commit_callbacks,
):
    escalation_id = escalate(operator, unknown_effect)
    with django_capture_on_commit_callbacks(execute=True):
        operator.post(
            f"/api/v1/effects/{unknown_effect}/resolve",
            {"outcome": "succeeded", "reason": "seen in the owner's console"},
        )

    assert_withdrawn(auditor, escalation_id, "a readback verified the effect")
    listed = reviewer.client.get("/api/v1/escalations", {"status": "open"}).json()
    assert escalation_id not in [item["escalation_id"] for item in listed["results"]]
    withdrawn = reviewer.client.get("/api/v1/escalations", {"status": "withdrawn"}).json()
    assert [item["escalation_id"] for item in withdrawn["results"]] == [escalation_id]
    decided = reviewer.post(f"/api/v1/escalations/{escalation_id}/approve", {"rationale": "ok"})
    assert (decided.status_code, decided.json()["code"]) == (409, "already_decided")


def test_an_operators_not_executed_withdraws_it_in_their_name(
    unknown_effect,
    operator,
    auditor,
):
    escalation_id = escalate(operator, unknown_effect)
    operator.post(
        f"/api/v1/effects/{unknown_effect}/resolve",
        {"outcome": "not_executed", "reason": "owner confirmed by phone"},
    )

    assert_withdrawn(auditor, escalation_id, f"{operator.name} resolved it not executed")
    audit = AuditEvent.objects.get(action="escalation.withdraw")
    assert audit.actor_name == operator.name


def test_the_workers_resolution_withdraws_it(never_executed, operator, auditor):
    escalation_id = escalate(operator, never_executed.idempotency_key)
    assert effect_resolve_unknown(effect_id=never_executed.pk).status == "not_executed"

    assert_withdrawn(auditor, escalation_id, "showed it not executed")


@pytest.mark.parametrize("tab", ["withdrawn", "all"])
def test_the_console_lists_withdrawn_escalations_apart_from_the_queue(
    never_executed,
    operator,
    reviewer,
    tab,
):
    escalation_id = escalate(operator, never_executed.idempotency_key)
    effect_resolve_unknown(effect_id=never_executed.pk)

    browser = signed_in(reviewer)
    page = browser.get("/escalations/", {"status": tab})
    assert escalation_id in page.content.decode()
    assert page.context["tab_counts"]["withdrawn"] == 1
    assert page.context["tab_counts"]["open"] == 0
    queue = browser.get("/escalations/")
    assert escalation_id not in queue.content.decode()
    assert Escalation.objects.get(escalation_id=escalation_id).status == "withdrawn"
