"""The queue says which escalations the gate would refuse a commit on now: after a source's
quarantine, a correction or a new contract version, approving them changes nothing, and a
reviewer should not have to open each one to learn it."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import COLLECTIONS, load_yaml
from tests.reconcile_app.console.conftest import read_back
from tests.reconcile_app.console.test_escalation_subjects import complaint_open, escalated
from tests.reconcile_app.effects.test_gate import TIGHTENED


def row_of(page: str, escalation_id: str) -> str:
    [row] = re.findall(rf'<tr id="escalation-{escalation_id}".*?</tr>', page, re.S)
    return row


@pytest.fixture
def asked(estate: Any, agent: Any) -> list[str]:
    complaint_open("account-71")
    complaint_open("account-72")
    return [escalated(agent, "account-71"), escalated(agent, "account-72")]


def test_an_open_question_is_not_marked_while_an_approval_would_authorise(asked, reviewer_browser):
    page = reviewer_browser.get("/escalations/").content.decode()
    for escalation_id in asked:
        assert "cannot commit" not in row_of(page, escalation_id)


def test_a_quarantined_source_marks_every_question_resting_on_it(asked, operator, reviewer_browser):
    from reconcile_app.services.quarantine import quarantine_create

    quarantine_create(scope="source", target="case-service", reason="bad", actor=operator.user)

    page = reviewer_browser.get("/escalations/").content.decode()
    for escalation_id in asked:
        row = row_of(page, escalation_id)
        assert "cannot commit" in row and "source_quarantined" in row
        assert "case-service quarantined since it was read" in row


def test_a_correction_marks_only_the_question_resting_on_the_evidence(
    asked, agent, operator, reviewer_browser
):
    from reconcile_app.models import DecisionSnapshot, Escalation
    from reconcile_app.services.corrections import correction_create

    snapshot = DecisionSnapshot.objects.get(
        pk=Escalation.objects.get(escalation_id=asked[0]).snapshot_id
    )
    used = snapshot.content["fields"]["collections_status"]["evidence"][0]
    correction_create(evidence_id=used, reason="misattributed", actor=operator.user)

    page = reviewer_browser.get("/escalations/").content.decode()
    assert "snapshot_tainted" in row_of(page, asked[0])
    assert "cannot commit" not in row_of(page, asked[1])


def test_a_new_contract_version_marks_questions_asked_under_the_old(
    asked, reviewer_browser, tmp_path
):
    load_yaml(tmp_path, {"tightened.yaml": TIGHTENED})

    page = reviewer_browser.get("/escalations/").content.decode()
    for escalation_id in asked:
        row = row_of(page, escalation_id)
        assert "contract_superseded" in row and "is no longer the active version" in row


def test_an_approval_within_its_window_is_marked_too(asked, operator, reviewer_browser):
    from reconcile_app.services.quarantine import quarantine_create

    reviewer_browser.post(f"/escalations/{asked[0]}/approve/", {"rationale": "ok"})
    quarantine_create(scope="source", target="case-service", reason="bad", actor=operator.user)

    page = reviewer_browser.get("/escalations/?status=approved").content.decode()
    assert "source_quarantined" in row_of(page, asked[0])


def test_the_marks_cost_the_same_however_many_rows(asked, agent, operator, reviewer_browser):
    from reconcile_app.services.quarantine import quarantine_create, quarantine_lift

    def quarantined_count(expected_marks: int) -> int:
        held = quarantine_create(
            scope="source", target="case-service", reason="bad", actor=operator.user
        )
        reviewer_browser.get("/escalations/")  # warm the session
        with CaptureQueriesContext(connection) as queries:
            page = reviewer_browser.get("/escalations/?status=all").content.decode()
        assert page.count("source_quarantined") == expected_marks
        quarantine_lift(quarantine_id=held.quarantine_id, reason="clean", actor=operator.user)
        return len(queries)

    few = quarantined_count(2)
    for index in range(4):
        complaint_open(f"account-8{index}")
        escalated(agent, f"account-8{index}")
    assert quarantined_count(6) == few


def test_an_effects_question_settled_since_is_marked_settled(
    unknown_effect, operator, reviewer_browser
):
    """An operator handed an unknown outcome to its owner; the worker then proved it applied.
    The escalation stays open (its status has no "answered"), so the row says nothing is
    left for the owner to confirm, rather than looking like an outage still waiting."""
    from reconcile_app.services.effect_escalations import escalation_open_for_effect
    from reconcile_app.services.effects import effect_resolve_unknown

    escalation = escalation_open_for_effect(
        idempotency_key=unknown_effect.idempotency_key, actor=operator.user, reason="ledger down"
    )
    page = reviewer_browser.get("/escalations/").content.decode()
    assert "settled" not in row_of(page, escalation.escalation_id)

    # The owner answers that it ran: accepted, its readback still to prove it: not settled.
    assert effect_resolve_unknown(effect_id=unknown_effect.pk).status == "accepted"
    row = row_of(reviewer_browser.get("/escalations/").content.decode(), escalation.escalation_id)
    assert "settled" not in row

    assert read_back(unknown_effect).status == "verified"
    row = row_of(reviewer_browser.get("/escalations/").content.decode(), escalation.escalation_id)
    assert "settled" in row and "verified" in row
    assert "nothing left for its owner to confirm" in row


def _withdraw(kind: str, operator: Any, snapshot: dict[str, Any], tmp_path: Any) -> None:
    from reconcile_app.services.corrections import correction_create
    from reconcile_app.services.quarantine import quarantine_create

    if kind == "source_quarantined":
        quarantine_create(scope="source", target="case-service", reason="bad", actor=operator.user)
    elif kind == "snapshot_tainted":
        used = snapshot["fields"]["collections_status"]["evidence"][0]
        correction_create(evidence_id=used, reason="misattributed", actor=operator.user)
    else:
        load_yaml(tmp_path, {"tightened.yaml": TIGHTENED})


@pytest.mark.parametrize("kind", ["source_quarantined", "snapshot_tainted", "contract_superseded"])
def test_the_mark_is_what_the_gate_answers_the_approved_commit(
    kind, estate, agent, operator, reviewer_browser, tmp_path
):
    """One set of rules (services/effects/standing.py) for the queue and the gate: the row's
    mark is the refusal the agent's commit then meets, code for code."""
    from tests.reconcile_app.effects.conftest import commit

    complaint_open("account-91")
    asked = agent.post(
        "/api/v1/reconcile",
        {
            "subject": "account-91",
            "purpose": "collections",
            "decision_class": COLLECTIONS,
            "proposed_action": "release_collections_hold",
        },
    ).json()
    escalation_id = asked["escalation_id"]
    reviewer_browser.post(f"/escalations/{escalation_id}/approve/", {"rationale": "ok"})
    _withdraw(kind, operator, asked, tmp_path)

    row = row_of(
        reviewer_browser.get("/escalations/?status=approved").content.decode(), escalation_id
    )
    response = commit(agent, asked, "release_collections_hold", "released", f"k-{kind}")

    assert response.json()["code"] == kind
    assert "cannot commit" in row and kind in row
