"""POST /api/v1/reconcile: typed completeness, the policy's order and its failures, binding.

The seed's reconciler, freshness, availability and evidence: test_reconcile.py.
"""

from __future__ import annotations

import pytest

from reconcile_app.errors import ValidationFailed
from reconcile_app.models import Contract, DecisionSnapshot
from reconcile_app.services.contracts import contracts_load
from reconcile_app.services.principals import principal_create
from sandbox_app.services import sandbox_fault_add
from tests.conftest import make_agent
from tests.factories import (
    COLLECTIONS,
    SandboxRecordFactory,
    load_yaml,
    reconcile_body,
    seed_account_17,
    seed_collectible,
    write_yaml,
)
from tests.reconcile_app.api.test_reconcile import RECONCILE, codes, reconcile

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


def lab_forced_live(tmp_path, policy: str) -> None:
    """lab-service and a lab-check contract with `policy`, made active without its release
    gates (as a version from before the gates might be)."""
    paths = [
        str(write_yaml(tmp_path, "lab.yaml", LAB_SOURCE)),
        str(write_yaml(tmp_path, "lab-check.yaml", lab_contract(policy))),
    ]
    contracts_load(paths=paths, activate=False)
    Contract.objects.filter(decision_class="lab-check").update(status="active")


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
    """The engine fails closed even for a rule the `policy_evaluates` release gate would keep
    from going live (here forced live, as a version from before the gates might be)."""
    lab_forced_live(
        tmp_path,
        "  escalate: [{when: 'fields.flag == \"open\"', code: flag_open}]\n"
        "  allow: [{when: 'true', permits: [adjust]}]",
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
    launcher = make_agent("launcher-agent", [f"{COLLECTIONS}:launch_rockets"])
    response = launcher.post(RECONCILE, reconcile_body(action="launch_rockets"))
    assert response.status_code == 400
    assert response.json()["code"] == "unknown_action"
    assert response.json()["actions"] == ["release_collections_hold", "retain_manual_review"]


def test_a_capability_names_one_action_not_a_wildcard(db):
    # A wildcard would grant every action a later contract version adds, unreviewed.
    with pytest.raises(ValidationFailed, match="no wildcard"):
        principal_create(name="wildcard-agent", capabilities=[f"{COLLECTIONS}:*"])
    assert principal_create(name="fact-agent", capabilities=["fact:baseline.*"])[0].pk


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
