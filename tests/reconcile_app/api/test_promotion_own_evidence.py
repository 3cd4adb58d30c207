"""Four eyes over a suggested memory's grounds: a reviewer who also operates may attest
evidence, and never approves a suggestion derived from evidence they attested (the same
person would vouch for the grounds and promote what rests on them). As for a decision's
escalation (test_escalation_own_evidence.py); rejecting stays open to them."""

from __future__ import annotations

import pytest

from reconcile_app.models import AuditEvent, Escalation
from tests.conftest import ago
from tests.reconcile_app.api.test_promotions import decide, operator_reviewer, suggest  # noqa: F401
from tests.reconcile_app.console.conftest import signed_in


@pytest.fixture
def grounds_i_attested(estate, operator_reviewer) -> str:
    response = operator_reviewer.post(
        "/api/v1/evidence",
        {
            "kind": "observation",
            "subject": "account-17",
            "field": "collections_status",
            "value": "hold",
            "source": "case-ledger",
            "observed_at": ago(minutes=10).isoformat(),
        },
    )
    assert response.status_code == 201, response.content
    return str(response.json()["evidence_id"])


def test_a_suggestion_derived_from_my_evidence_is_not_mine_to_approve(
    agent,
    operator_reviewer,
    grounds_i_attested,
):
    escalation_id = suggest(agent, derived_from=[grounds_i_attested])["promotion_escalation_id"]

    refused = decide(operator_reviewer, escalation_id, "approve")

    assert refused.status_code == 403, refused.content
    assert refused.json()["code"] == "self_approval_forbidden"
    assert refused.json()["attested"] == [grounds_i_attested]
    assert Escalation.objects.get(escalation_id=escalation_id).status == "open"
    assert not AuditEvent.objects.filter(action="escalation.approve").exists()
    page = signed_in(operator_reviewer).get(f"/escalations/{escalation_id}/").content.decode()
    assert 'id="attested-by-me"' in page and 'id="approve-form"' not in page
    assert decide(operator_reviewer, escalation_id, "reject").status_code == 200


def test_another_reviewer_approves_it(agent, reviewer, grounds_i_attested):
    escalation_id = suggest(agent, derived_from=[grounds_i_attested])["promotion_escalation_id"]

    assert decide(reviewer, escalation_id, "approve").status_code == 200
