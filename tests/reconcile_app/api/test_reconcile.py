"""POST /api/v1/reconcile: the seed's reconciler, freshness, availability, evidence, policy."""

from __future__ import annotations

from datetime import timedelta

import pytest

from reconcile_app.models import DecisionSnapshot
from reconcile_app.services.principals import principal_create
from sandbox_app.services import sandbox_fault_add
from tests.conftest import make_agent
from tests.factories import (
    ACCOUNT,
    COLLECTIONS,
    EvidenceFactory,
    SandboxRecordFactory,
    claim,
    load_yaml,
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


# --- Completeness is typed ---------------------------------------------------------------------


def test_all_fields_ok_is_complete(estate, agent, now):
    seed_collectible(now)
    body = reconcile(agent)
    assert body["completeness"] == "complete"
    assert body["fields"]["complaint_status"]["status"] == "ok"


def test_optional_field_unavailable_degrades_but_still_decides(estate, agent, now):
    seed_collectible(now)
    sandbox_fault_add(source="complaints-service", kind="unavailable")

    body = reconcile(agent)

    assert body["completeness"] == "degraded"
    assert body["fields"]["complaint_status"]["status"] == "unavailable"
    assert body["fields"]["complaint_status"]["value"] is None
    assert body["fields"]["complaint_status"]["required"] is False
    assert body["decision"]["result"] == "allow"


def test_required_field_unavailable_is_incomplete(estate, agent, now):
    seed_collectible(now)
    sandbox_fault_add(source="case-service", kind="unavailable")

    body = reconcile(agent)

    assert body["completeness"] == "incomplete"
    assert body["decision"]["result"] == "refuse"
    assert codes(body) == ["state_unavailable", "contract_incomplete"]


# --- Policy order: refusals → deny → escalate → allow ------------------------------------------


def test_deny_beats_escalate(estate, agent, now):
    seed_account_17(now, complaint="open")
    body = reconcile(agent)
    assert body["decision"]["result"] == "deny"
    assert codes(body) == ["hardship_hold"]


def test_open_complaint_escalates(estate, agent, now):
    seed_collectible(now, complaint="open")
    body = reconcile(agent)
    assert body["decision"]["result"] == "escalate"
    assert codes(body) == ["open_complaint"]
    assert body["decision"]["permitted_actions"] == []


def test_collect_without_complaint_allows_the_permitted_actions(estate, agent, now):
    seed_collectible(now)
    body = reconcile(agent)
    assert body["decision"]["result"] == "allow"
    assert body["decision"]["permitted_actions"] == [
        "release_collections_hold",
        "retain_manual_review",
    ]


def test_permitted_actions_are_limited_to_the_principals_capabilities(estate, now):
    limited = make_agent("limited-agent", [f"{COLLECTIONS}:retain_manual_review"])
    seed_collectible(now)
    body = reconcile(limited, action="retain_manual_review")
    assert body["decision"]["result"] == "allow"
    assert body["decision"]["permitted_actions"] == ["retain_manual_review"]


def test_refusal_beats_deny(estate, agent, now):
    seed_account_17(now)
    sandbox_fault_add(source="case-service", kind="lag", seconds=900)
    body = reconcile(agent)
    assert body["decision"]["result"] == "refuse"
    assert "hardship_hold" not in codes(body)


LAB_SOURCE = """
source: lab-service
owner: lab-team
adapter: sandbox
consistency: linearizable
expected_lag_seconds: 0
fact_classes: [level, flag]
"""


def lab_contract(policy: str) -> str:
    return f"""
decision_class: lab-check
version: "1"
purpose: testing
required:
  - {{field: level, source: lab-service, max_age_seconds: 300}}
optional:
  - {{field: flag, source: lab-service, max_age_seconds: 300}}
actions:
  adjust: {{field: level}}
policy:
  version: "lab-1"
{policy}
contradictions: escalate
"""


@pytest.fixture
def lab_agent(db):
    return make_agent("lab-agent", ["lab-check:adjust"])


def lab_reconcile(persona):
    response = persona.post(
        RECONCILE,
        {
            "subject": "sample-1",
            "purpose": "testing",
            "decision_class": "lab-check",
            "proposed_action": "adjust",
        },
    )
    assert response.status_code == 201, response.content
    return response.json()


def test_deny_condition_that_fails_to_evaluate_denies(db, tmp_path, lab_agent):
    load_yaml(
        tmp_path,
        {
            "lab.yaml": LAB_SOURCE,
            "lab-check.yaml": lab_contract(
                "  deny: [{when: 'fields.level > 3', code: too_high}]\n"
                "  allow: [{when: 'true', permits: [adjust]}]"
            ),
        },
    )
    SandboxRecordFactory(source="lab-service", subject="sample-1", field="level", value="high")
    SandboxRecordFactory(source="lab-service", subject="sample-1", field="flag", value="x")

    body = lab_reconcile(lab_agent)

    assert body["decision"]["result"] == "deny"
    assert codes(body) == ["too_high"]
    assert "could not be evaluated" in body["decision"]["reasons"][0]["detail"]


def test_escalate_condition_on_an_absent_field_fails_closed(db, tmp_path, lab_agent):
    load_yaml(
        tmp_path,
        {
            "lab.yaml": LAB_SOURCE,
            "lab-check.yaml": lab_contract(
                "  escalate: [{when: 'fields.flag == \"open\"', code: flag_open}]\n"
                "  allow: [{when: 'true', permits: [adjust]}]"
            ),
        },
    )
    SandboxRecordFactory(source="lab-service", subject="sample-1", field="level", value=1)
    # No flag record: the optional field is not ok, so `fields.flag` is absent.

    body = lab_reconcile(lab_agent)

    assert body["completeness"] == "degraded"
    assert body["decision"]["result"] == "escalate"
    assert codes(body) == ["flag_open"]


def test_allow_condition_that_fails_to_evaluate_does_not_allow(db, tmp_path, lab_agent):
    load_yaml(
        tmp_path,
        {
            "lab.yaml": LAB_SOURCE,
            "lab-check.yaml": lab_contract(
                "  allow: [{when: 'fields.level > 3', permits: [adjust]}]"
            ),
        },
    )
    SandboxRecordFactory(source="lab-service", subject="sample-1", field="level", value="high")
    SandboxRecordFactory(source="lab-service", subject="sample-1", field="flag", value="x")

    body = lab_reconcile(lab_agent)

    assert body["decision"]["result"] == "deny"
    assert codes(body) == ["no_rule_matched"]
    assert body["decision"]["permitted_actions"] == []


def test_allow_condition_that_evaluates_true_allows(db, tmp_path, lab_agent):
    load_yaml(
        tmp_path,
        {
            "lab.yaml": LAB_SOURCE,
            "lab-check.yaml": lab_contract(
                "  allow: [{when: 'fields.level > 3', permits: [adjust]}]"
            ),
        },
    )
    SandboxRecordFactory(source="lab-service", subject="sample-1", field="level", value=5)
    SandboxRecordFactory(source="lab-service", subject="sample-1", field="flag", value="x")

    body = lab_reconcile(lab_agent)

    assert body["decision"]["result"] == "allow"
    assert body["decision"]["permitted_actions"] == ["adjust"]


# --- Binding: purpose, action, decision class, capability ---------------------------------------


def test_purpose_mismatch_is_forbidden(estate, agent, now):
    seed_account_17(now)
    response = agent.post(RECONCILE, reconcile_body(purpose="marketing"))
    assert response.status_code == 403
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "purpose_mismatch"


def test_unknown_action_is_a_bad_request(estate, now):
    wildcard = make_agent("wildcard-agent", [f"{COLLECTIONS}:*"])
    response = wildcard.post(RECONCILE, reconcile_body(action="launch_rockets"))
    assert response.status_code == 400
    assert response.json()["code"] == "unknown_action"
    assert response.json()["actions"] == ["release_collections_hold", "retain_manual_review"]


def test_unknown_decision_class_is_not_found_for_a_capable_principal(estate):
    _principal, key = principal_create(name="ghost-agent", capabilities=["ghost-class:haunt"])
    from tests.conftest import _client

    response = _client(key).post(
        RECONCILE,
        {
            "subject": "x",
            "purpose": "p",
            "decision_class": "ghost-class",
            "proposed_action": "haunt",
        },
        format="json",
    )
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "unknown_decision_class"


def test_outsider_without_capability_is_refused_and_nothing_is_issued(estate, outsider, now):
    seed_account_17(now)
    for decision_class, purpose, action in [
        (COLLECTIONS, "collections", "release_collections_hold"),
        ("warehouse-pick", "fulfilment", "pick_pallet"),
        (COLLECTIONS, "collections", ""),
    ]:
        response = outsider.post(
            RECONCILE,
            reconcile_body(
                decision_class=decision_class,
                purpose=purpose,
                action=action,
            ),
        )
        assert response.status_code == 403, response.content
        assert response["Content-Type"] == "application/problem+json"
        assert response.json()["code"] == "capability_missing"
    assert DecisionSnapshot.objects.count() == 0


def test_agent_proposing_an_action_it_lacks_is_refused(estate, now):
    limited = make_agent("limited-agent", [f"{COLLECTIONS}:retain_manual_review"])
    seed_collectible(now)

    response = limited.post(RECONCILE, reconcile_body(action="release_collections_hold"))

    assert response.status_code == 403
    assert response.json()["code"] == "capability_missing"
    assert response.json()["capability"] == f"{COLLECTIONS}:release_collections_hold"
    assert DecisionSnapshot.objects.count() == 0


def test_person_without_capability_cannot_reconcile(estate, operator, now):
    seed_collectible(now)
    response = operator.post(RECONCILE, reconcile_body())
    assert response.status_code == 403
    assert response.json()["code"] == "capability_missing"


def test_pinned_contract_version_is_used_only_when_it_is_the_active_one(estate, agent, now):
    seed_account_17(now)
    body = agent.post(RECONCILE, {**reconcile_body(), "contract_version": "7.3"}).json()
    assert body["contract"]["version"] == "7.3"

    response = agent.post(RECONCILE, {**reconcile_body(), "contract_version": "9.9"})
    assert response.status_code == 422
    assert response.json()["code"] == "contract_version_inactive"
    assert not DecisionSnapshot.objects.filter(contract__version="9.9").exists()
