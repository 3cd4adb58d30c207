"""GET /api/v1/me: who the caller is and what it may do (docs/api.md "Reconcile")."""

from __future__ import annotations

from tests.conftest import COLLECTIONS
from tests.factories import load_yaml
from tests.reconcile_app.effects.test_gate import TIGHTENED


def test_an_agent_sees_its_capabilities_and_the_active_versions(estate, agent, tmp_path):
    load_yaml(tmp_path, {"tightened.yaml": TIGHTENED})

    body = agent.get("/api/v1/me").json()

    assert (body["name"], body["kind"], body["roles"]) == (agent.name, "agent", ["agent"])
    assert "attest:case-ledger" in body["capabilities"]
    assert body["attests"] == ["case-ledger"]
    assert body["fact_patterns"] == ["baseline.*", "collections.*", "quota.*"]
    classes = {item["decision_class"]: item for item in body["decision_classes"]}
    assert classes[COLLECTIONS] == {
        "decision_class": COLLECTIONS,
        "active_version": "7.4",
        "actions": ["release_collections_hold", "retain_manual_review"],
    }
    assert set(classes) == {COLLECTIONS, "warehouse-pick", "dispatch-card"}


def test_a_person_sees_their_role_and_no_decision_classes(estate, reviewer):
    body = reviewer.get("/api/v1/me").json()
    assert (body["kind"], body["roles"], body["decision_classes"]) == ("person", ["reviewer"], [])


def test_a_class_without_an_active_version_is_not_listed(db, agent):
    assert agent.get("/api/v1/me").json()["decision_classes"] == []


def test_anonymous_gets_401(client, db):
    response = client.get("/api/v1/me")
    assert response.status_code == 401
    assert response["Content-Type"] == "application/problem+json"
