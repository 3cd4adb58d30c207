"""POST /api/v1/reconcile: the seed's reconciler, freshness, availability and evidence.

Completeness, the policy's order and its failures, and binding: test_reconcile_policy.py.
"""

from __future__ import annotations

from datetime import timedelta

from sandbox_app.services import sandbox_fault_add
from tests.factories import (
    ACCOUNT,
    COLLECTIONS,
    EvidenceFactory,
    SandboxRecordFactory,
    claim,
    reconcile_body,
    seed_account_17,
    seed_collectible,
)

RECONCILE = "/api/v1/reconcile"


def codes(body: dict) -> list[str]:
    return [reason["code"] for reason in body["decision"]["reasons"]]


def revoke(operator, evidence_id: str, reason: str = "entered in error") -> dict:
    """Revocations come only through the operators' corrections workflow."""
    response = operator.post("/api/v1/corrections", {"evidence_id": evidence_id, "reason": reason})
    assert response.status_code in (201, 202), response.content
    return response.json()


def reconcile(persona, **kwargs):
    response = persona.post(RECONCILE, reconcile_body(**kwargs))
    assert response.status_code == 201, response.content
    return response.json()


# --- The seed's worked example (seed 000 run_demo) -------------------------------------------


def test_positive_hold_claim_is_confirmed_and_the_contract_denies(estate, agent, now):
    seed_account_17(now)
    body = reconcile(
        agent,
        claims=[
            claim(
                "hold",
                written_at=now - timedelta(minutes=10),
                derived_from=["ev-002"],
                note="Hardship approval suppresses collections.",
            )
        ],
    )

    assert body["claims"][0]["verdict"] == "confirmed"
    assert body["claims"][0]["evidence"] == ["ev-002"]
    assert body["decision"]["result"] == "deny"
    assert codes(body) == ["hardship_hold"]
    assert body["decision"]["permitted_actions"] == []
    assert body["decision"]["policy_version"] == "collections-2026-08"
    field = body["fields"]["collections_status"]
    assert (field["value"], field["version"], field["status"]) == ("hold", 42, "ok")
    assert field["source"] == "case-service"
    assert field["evidence"] == ["ev-002"]
    assert field["max_age_seconds"] == 300
    assert field["consistency"] == "linearizable"
    assert body["completeness"] == "complete"
    assert body["contract"] == {"decision_class": COLLECTIONS, "version": "7.3"}
    assert body["contradictions"] == []


def test_older_collect_memory_is_superseded_by_later_evidence(estate, agent, now):
    seed_account_17(now)
    body = reconcile(
        agent,
        claims=[
            claim(
                "collect",
                written_at=now - timedelta(hours=3),
                derived_from=["ev-001"],
                note="Account remains collectible.",
            )
        ],
    )

    verdict = body["claims"][0]
    assert verdict["verdict"] == "superseded"
    assert verdict["evidence"] == ["ev-002"]
    assert verdict["reason"]
    # A superseded memory is not a contradiction: the later evidenced state replaced it.
    assert body["contradictions"] == []
    assert body["decision"]["result"] == "deny"


def test_state_past_its_freshness_limit_is_stale_and_refused(estate, agent, operator, now):
    seed_account_17(now)
    response = operator.post("/api/v1/sandbox/case-service/faults", {"kind": "lag", "seconds": 400})
    assert response.status_code == 201, response.content

    body = reconcile(agent, claims=[claim("hold", written_at=now - timedelta(minutes=10))])

    assert body["claims"][0]["verdict"] == "stale_state"
    field = body["fields"]["collections_status"]
    assert field["status"] == "stale"
    assert body["decision"]["result"] == "refuse"
    assert "stale_state" in codes(body)
    assert body["decision"]["permitted_actions"] == []
    assert body["completeness"] == "incomplete"


def test_state_just_inside_its_freshness_limit_is_ok(estate, agent, now):
    seed_account_17(now)
    sandbox_fault_add(source="case-service", kind="lag", seconds=200)

    body = reconcile(agent)

    assert body["fields"]["collections_status"]["status"] == "ok"
    assert body["decision"]["result"] == "deny"


def test_claim_equal_to_state_without_supporting_evidence_is_unverified(estate, agent, now):
    SandboxRecordFactory(value="hold", version=42)
    SandboxRecordFactory(source="complaints-service", field="complaint_status", value="none")

    body = reconcile(agent, claims=[claim("hold", written_at=now - timedelta(minutes=5))])

    assert body["claims"][0]["verdict"] == "unverified"
    assert body["claims"][0]["evidence"] == []


def test_claim_about_another_subject_is_out_of_scope(estate, agent, now):
    seed_account_17(now)
    body = reconcile(
        agent,
        claims=[
            claim("hold", written_at=now - timedelta(minutes=5), subject="account-99"),
            claim("hold", written_at=now - timedelta(minutes=5), purpose="marketing"),
        ],
    )

    assert [c["verdict"] for c in body["claims"]] == ["out_of_scope", "out_of_scope"]


def test_unavailable_owner_refuses_and_presents_no_value_as_current(estate, agent, operator, now):
    seed_account_17(now)
    response = operator.post("/api/v1/sandbox/case-service/faults", {"kind": "unavailable"})
    assert response.status_code == 201, response.content

    body = reconcile(agent, claims=[claim("hold", written_at=now - timedelta(minutes=5))])

    field = body["fields"]["collections_status"]
    assert field["status"] == "unavailable"
    assert field["value"] is None
    assert field["version"] is None
    assert field["evidence"] == []
    assert body["decision"]["result"] == "refuse"
    assert "state_unavailable" in codes(body)
    assert body["completeness"] == "incomplete"
    # Nothing to compare the memory with: it cannot be confirmed.
    assert body["claims"][0]["verdict"] == "unverified"


def test_missing_owner_record_is_unavailable_not_a_guess(estate, agent, now):
    SandboxRecordFactory(source="complaints-service", field="complaint_status", value="none")
    body = reconcile(agent)

    assert body["fields"]["collections_status"]["status"] == "unavailable"
    assert body["fields"]["collections_status"]["value"] is None
    assert body["decision"]["result"] == "refuse"
    assert "state_unavailable" in codes(body)


def test_differing_claim_without_later_evidence_is_contradicted(estate, agent, now):
    seed_account_17(now)
    # Written after ev-002: no later evidence replaced it, so it is a disagreement.
    body = reconcile(agent, claims=[claim("collect", written_at=now - timedelta(minutes=10))])

    assert body["claims"][0]["verdict"] == "contradicted"
    assert body["claims"][0]["evidence"] == []


def test_required_evidence_missing_refuses(estate, agent, now):
    SandboxRecordFactory(value="collect", version=3)
    SandboxRecordFactory(source="complaints-service", field="complaint_status", value="none")

    body = reconcile(agent)

    assert body["decision"]["result"] == "refuse"
    assert codes(body) == ["evidence_missing"]
    assert body["fields"]["collections_status"]["status"] == "ok"
    assert body["fields"]["collections_status"]["evidence"] == []
    # The state itself was read: the snapshot is complete, only its support is missing.
    assert body["completeness"] == "complete"


def test_evidence_for_another_value_does_not_support_the_state(estate, agent, now):
    SandboxRecordFactory(value="collect", version=3, valid_from=now - timedelta(hours=2))
    EvidenceFactory(value="hold", observed_at=now - timedelta(hours=3))
    SandboxRecordFactory(source="complaints-service", field="complaint_status", value="none")

    body = reconcile(agent)

    assert body["decision"]["result"] == "refuse"
    assert codes(body) == ["evidence_missing"]


def test_revoking_the_only_support_refuses_with_evidence_missing(estate, agent, operator, now):
    seed_collectible(now)
    assert reconcile(agent)["decision"]["result"] == "allow"

    revoke(operator, f"ev-collect-{ACCOUNT}", "approval document found invalid")

    body = reconcile(agent)
    assert body["decision"]["result"] == "refuse"
    assert codes(body) == ["evidence_missing"]
    assert body["fields"]["collections_status"]["evidence"] == []


def test_revoked_support_no_longer_confirms_a_claim(estate, agent, operator, now):
    seed_account_17(now)
    revoke(operator, "ev-002")

    body = reconcile(agent, claims=[claim("hold", written_at=now - timedelta(minutes=10))])

    assert body["claims"][0]["verdict"] == "unverified"
    assert body["decision"]["result"] == "refuse"
    assert "evidence_missing" in codes(body)


def test_revocation_naming_the_field_is_not_an_observation_of_null(estate, agent, operator, now):
    """A revocation withdraws ev-002; it does not say the case service now holds `null`."""
    seed_account_17(now)
    correction = revoke(operator, "ev-002")
    assert correction["correction"]["field"] == "collections_status"

    body = reconcile(agent)

    assert codes(body) == ["evidence_missing"]
    assert [c for c in body["contradictions"] if c["kind"] == "evidence_vs_state"] == []


def test_revoking_an_old_unrelated_entry_does_not_change_an_allow(estate, agent, operator, now):
    seed_collectible(now)
    EvidenceFactory(evidence_id="ev-typo", value="collect", observed_at=now - timedelta(hours=2))
    assert reconcile(agent)["decision"]["result"] == "allow"

    revoke(operator, "ev-typo")

    # ev-collect still supports the state; withdrawing a duplicate changes nothing.
    body = reconcile(agent)
    assert body["decision"]["result"] == "allow"
    assert body["contradictions"] == []


def test_superseding_evidence_moves_the_support_to_the_new_entry(estate, agent, now):
    seed_account_17(now)
    response = agent.post(
        "/api/v1/evidence",
        {
            "kind": "observation",
            "subject": ACCOUNT,
            "field": "collections_status",
            "value": "hold",
            "source": "case-ledger",
            "observed_at": (now - timedelta(minutes=20)).isoformat(),
            "supersedes": "ev-002",
            "evidence_id": "ev-003",
        },
    )
    assert response.status_code == 201, response.content

    body = reconcile(agent)

    assert body["fields"]["collections_status"]["evidence"] == ["ev-003"]
