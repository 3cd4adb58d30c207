"""Four eyes over a decision's grounds: a reviewer who also operates may attest evidence of any
source, and an approval never rests on evidence its reviewer attested — the same person would
both vouch for the state that let policy decide and authorise the action on it. Rejecting
stays open to them; another reviewer approves."""

from __future__ import annotations

import re

import pytest

from reconcile_app.models import AuditEvent, Effect, Escalation
from sandbox_app.services import sandbox_record_write
from tests.conftest import COLLECTIONS, ago, make_person
from tests.reconcile_app.console.conftest import signed_in
from tests.reconcile_app.effects.conftest import commit

SUBJECT = "account-61"
ACTION = "release_collections_hold"


@pytest.fixture
def both(db):
    return make_person("rowan-both", ["operator", "reviewer"])


def attested_by(persona) -> str:
    """The collections_status observation the required field needs (evidence: required),
    recorded by `persona`."""
    response = persona.post(
        "/api/v1/evidence",
        {
            "kind": "observation",
            "subject": SUBJECT,
            "field": "collections_status",
            "value": "collect",
            "source": "case-ledger",
            "observed_at": ago(minutes=10).isoformat(),
        },
    )
    assert response.status_code == 201, response.content
    return str(response.json()["evidence_id"])


@pytest.fixture
def escalated_on_my_evidence(estate, agent, both) -> tuple[dict, str]:
    """Collectible, with an open complaint (the contract escalates), and the only evidence
    supporting collections_status attested by the operator-reviewer."""
    sandbox_record_write(
        source="case-service",
        subject=SUBJECT,
        field="collections_status",
        value="collect",
        valid_from=ago(minutes=20),
    )
    sandbox_record_write(
        source="complaints-service",
        subject=SUBJECT,
        field="complaint_status",
        value="open",
        valid_from=ago(minutes=5),
    )
    evidence_id = attested_by(both)
    response = agent.post(
        "/api/v1/reconcile",
        {
            "subject": SUBJECT,
            "purpose": "collections",
            "decision_class": COLLECTIONS,
            "proposed_action": ACTION,
        },
    )
    assert response.status_code == 201, response.content
    snapshot = response.json()
    assert snapshot["decision"]["result"] == "escalate"
    assert snapshot["fields"]["collections_status"]["evidence"] == [evidence_id]
    return snapshot, evidence_id


def test_an_approval_resting_on_my_evidence_is_refused(escalated_on_my_evidence, both, agent):
    snapshot, evidence_id = escalated_on_my_evidence
    escalation_id = snapshot["escalation_id"]
    response = both.post(
        f"/api/v1/escalations/{escalation_id}/approve", {"rationale": "I checked it myself"}
    )
    assert response.status_code == 403, response.content
    assert response.json()["code"] == "self_approval_forbidden"
    assert response.json()["attested"] == [evidence_id]
    assert Escalation.objects.get(escalation_id=escalation_id).status == "open"
    assert not AuditEvent.objects.filter(action="escalation.approve").exists()
    refused = commit(agent, snapshot, ACTION, "collect", "k-own-evidence")
    assert refused.json()["code"] == "escalation_pending"
    assert not Effect.objects.exists()


def test_i_may_still_reject(escalated_on_my_evidence, both, reviewer):
    snapshot, _ = escalated_on_my_evidence
    rejected = both.post(
        f"/api/v1/escalations/{snapshot['escalation_id']}/reject", {"rationale": "not so sure"}
    )
    assert rejected.status_code == 200, rejected.content


def test_someone_elses_evidence_does_not_stop_me(escalated_on_my_evidence, reviewer):
    snapshot, _ = escalated_on_my_evidence
    approved = reviewer.post(
        f"/api/v1/escalations/{snapshot['escalation_id']}/approve", {"rationale": "fees only"}
    )
    assert approved.status_code == 200, approved.content


def test_the_console_offers_me_reject_only(escalated_on_my_evidence, both):
    snapshot, evidence_id = escalated_on_my_evidence
    page = signed_in(both).get(f"/escalations/{snapshot['escalation_id']}/").content.decode()
    assert 'id="attested-by-me"' in page and evidence_id in page
    assert 'id="approve-form"' not in page
    assert 'id="reject-form"' in page
    forged = signed_in(both).post(
        f"/escalations/{snapshot['escalation_id']}/approve/", {"rationale": "mine"}
    )
    assert forged.status_code == 403
    assert re.search(
        r'id="decision-error">.*?self_approval_forbidden', forged.content.decode(), re.S
    )


def test_the_page_says_who_attested_each_entry_a_read_rests_on(escalated_on_my_evidence, reviewer):
    """The reads table listed bare evidence ids: a reviewer could neither open an entry nor
    see who vouched for it (here, an operator who also reviews)."""
    snapshot, evidence_id = escalated_on_my_evidence
    page = signed_in(reviewer).get(f"/escalations/{snapshot['escalation_id']}/").content.decode()
    [reads] = re.findall(
        r'<table class="data-table wrap-times" id="proposal-reads">.*?</table>', page, re.S
    )
    assert f'href="/evidence/{evidence_id}/"' in reads
    assert re.search(rf">{evidence_id}</a>\s*<span class=\"muted\">by rowan-both</span>", reads)
