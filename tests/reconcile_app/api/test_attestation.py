"""Evidence is attested (docs/api.md "Evidence and memory", issue 11 point 4).

Side doors shut: any agent appending evidence for any source; a `kind: correction` or
`revokes` that bypassed the operators' corrections workflow (no taint, no audit); evidence
dated years ahead that poisoned a subject with a permanent contradiction.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from reconcile_app.models import AuditEvent, EvidenceEntry, SnapshotTaint
from tests.conftest import make_agent
from tests.factories import ACCOUNT, EvidenceFactory, reconcile_body, seed_collectible

EVIDENCE = "/api/v1/evidence"


def observation(now, **extra):
    return {
        "kind": "observation",
        "subject": ACCOUNT,
        "field": "collections_status",
        "value": "hold",
        "source": "case-ledger",
        "observed_at": (now - timedelta(minutes=5)).isoformat(),
        **extra,
    }


def refused(response, status: int, code: str) -> None:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == code


def test_an_agent_attests_only_the_sources_it_holds_attest_for(db, agent, now):
    assert agent.post(EVIDENCE, observation(now)).status_code == 201

    response = agent.post(EVIDENCE, observation(now, source="complaints-desk"))

    refused(response, 403, "attestation_not_allowed")
    assert response.json()["capability"] == "attest:complaints-desk"
    assert EvidenceEntry.objects.count() == 1


def test_an_agent_without_attest_capabilities_appends_nothing(db, outsider, now):
    refused(outsider.post(EVIDENCE, observation(now)), 403, "attestation_not_allowed")
    assert not EvidenceEntry.objects.exists()


def test_superseding_another_sources_entry_needs_attest_for_that_source(db, agent, now):
    EvidenceFactory(evidence_id="ev-desk", source="complaints-desk")
    response = agent.post(EVIDENCE, observation(now, supersedes="ev-desk"))
    refused(response, 403, "attestation_not_allowed")
    assert response.json()["capability"] == "attest:complaints-desk"
    assert EvidenceEntry.objects.count() == 1


@pytest.mark.parametrize("persona_name", ["agent", "operator"])
@pytest.mark.parametrize(
    "extra",
    [
        {"kind": "correction"},
        {"revokes": "ev-target"},
        {"kind": "correction", "revokes": "ev-target"},
    ],
)
def test_corrections_never_come_through_the_evidence_endpoint(
    estate, request, now, persona_name, extra
):
    persona = request.getfixturevalue(persona_name)
    agent = request.getfixturevalue("agent")
    seed_collectible(now)
    EvidenceFactory(evidence_id="ev-target", value="collect")
    snapshot = agent.post("/api/v1/reconcile", reconcile_body()).json()
    before = EvidenceEntry.objects.count()

    response = persona.post(EVIDENCE, observation(now, **extra))

    refused(response, 403, "correction_requires_operator")
    assert EvidenceEntry.objects.count() == before
    assert not EvidenceEntry.objects.filter(revokes__isnull=False).exists()
    assert not SnapshotTaint.objects.filter(snapshot__snapshot_id=snapshot["snapshot_id"]).exists()


def test_evidence_observed_more_than_five_minutes_ahead_is_refused(db, agent, now):
    ahead = agent.post(
        EVIDENCE, observation(now, observed_at=(now + timedelta(days=3650)).isoformat())
    )
    refused(ahead, 422, "observed_in_future")
    assert ahead.json()["tolerance_seconds"] == 300
    assert not EvidenceEntry.objects.exists()

    skewed = agent.post(
        EVIDENCE, observation(now, observed_at=(now + timedelta(seconds=200)).isoformat())
    )
    assert skewed.status_code == 201, skewed.content


def test_an_operator_attests_any_source_and_is_audited(db, operator, now):
    response = operator.post(
        EVIDENCE,
        observation(now, source="courier-feedback", note="courier says gone away"),
        HTTP_X_REQUEST_ID="req-attest-1",
    )
    assert response.status_code == 201, response.content
    row = AuditEvent.objects.get(action="evidence.attest")
    assert (row.actor_name, row.object_ref, row.request_id) == (
        operator.name,
        response.json()["evidence_id"],
        "req-attest-1",
    )
    assert row.after["source"] == "courier-feedback"
    assert row.reason == "courier says gone away"


def test_an_agent_reads_only_the_evidence_it_attested(db, agent, auditor, now):
    mine = agent.post(EVIDENCE, observation(now)).json()["evidence_id"]
    other_agent = make_agent("ledger-clerk", ["attest:case-ledger"])
    theirs = other_agent.post(EVIDENCE, observation(now)).json()["evidence_id"]
    EvidenceFactory(evidence_id="ev-system")

    listed = [item["evidence_id"] for item in agent.get(EVIDENCE).json()["results"]]

    assert listed == [mine]
    assert agent.get(f"{EVIDENCE}/{mine}").status_code == 200
    refused(agent.client.get(f"{EVIDENCE}/{theirs}"), 404, "evidence_not_found")
    refused(agent.client.get(f"{EVIDENCE}/ev-system"), 404, "evidence_not_found")
    assert auditor.get(EVIDENCE).json()["count"] == 3


def test_an_agent_cannot_derive_from_another_principals_snapshot(estate, agent, now):
    seed_collectible(now)
    snapshot_id = agent.post("/api/v1/reconcile", reconcile_body()).json()["snapshot_id"]
    other = make_agent("ledger-clerk", ["attest:case-ledger"])

    response = other.post(EVIDENCE, observation(now, derived_from=[snapshot_id]))

    refused(response, 400, "unknown_reference")
    assert response.json()["missing"] == [snapshot_id]
    assert agent.post(EVIDENCE, observation(now, derived_from=[snapshot_id])).status_code == 201
