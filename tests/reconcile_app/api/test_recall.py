"""A claim may name the memory record it was recalled from (docs/api.md "Reconcile")."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reconcile_app.errors import ValidationFailed
from reconcile_app.models import Capability, ClaimVerdict, DecisionSnapshot
from reconcile_app.services.recall import ClaimDraft, claims_recall
from tests.conftest import COLLECTIONS, make_agent
from tests.reconcile_app.effects.conftest import SUBJECT, collectible, commit  # noqa: F401

RECONCILE = "/api/v1/reconcile"


def remember(persona, value: Any = "collect", **extra: Any) -> dict[str, Any]:
    body = {
        "memory_class": "episodic",
        "subject": SUBJECT,
        "purpose": "collections",
        "field": "collections_status",
        "value": value,
        "derived_from": ["ev-collect"],
        "written_at": "2026-08-30T09:00:00Z",
        **extra,
    }
    response = persona.post("/api/v1/memories", body)
    assert response.status_code == 201, response.content
    return response.json()


def recall(persona, *claims: dict[str, Any], action: str = "release_collections_hold"):
    return persona.post(
        RECONCILE,
        {
            "subject": SUBJECT,
            "purpose": "collections",
            "decision_class": COLLECTIONS,
            "proposed_action": action,
            "claims": list(claims),
        },
    )


def recalled(persona, *claims: dict[str, Any]) -> dict[str, Any]:
    response = recall(persona, *claims)
    assert response.status_code == 201, response.content
    return response.json()


def test_a_claim_naming_its_memory_takes_the_rest_from_the_record(collectible, agent):
    memory = remember(agent)
    body = recalled(agent, {"memory_id": memory["memory_id"]})
    claim = body["claims"][0]
    assert claim["memory_id"] == memory["memory_id"]
    assert (claim["subject"], claim["field"], claim["value"]) == (
        SUBJECT,
        "collections_status",
        "collect",
    )
    assert claim["memory_class"] == "episodic"
    assert claim["written_at"] == "2026-08-30T09:00:00Z"
    assert claim["derived_from"] == ["ev-collect"]
    assert claim["verdict"] == "confirmed"
    stored = ClaimVerdict.objects.get(snapshot__snapshot_id=body["snapshot_id"])
    assert stored.memory_id == memory["memory_id"]
    again = agent.client.get(f"/api/v1/snapshots/{body['snapshot_id']}").json()
    assert again["claims"][0]["memory_id"] == memory["memory_id"]


def test_a_claim_stating_what_its_record_says_is_accepted(collectible, agent):
    memory = remember(agent)
    body = recalled(
        agent,
        {
            "memory_id": memory["memory_id"],
            "subject": SUBJECT,
            "field": "collections_status",
            "value": "collect",
            "written_at": "2026-08-30T09:00:00Z",
            "memory_class": "episodic",
            "note": "from my notes",
        },
    )
    assert body["claims"][0]["verdict"] == "confirmed"
    assert body["claims"][0]["note"] == "from my notes"


@pytest.mark.parametrize(
    ("stated", "mismatched"),
    [
        ({"value": "hold"}, ["value"]),
        ({"subject": "account-99"}, ["subject"]),
        ({"field": "complaint_status"}, ["field"]),
        ({"written_at": "2026-08-30T09:00:01Z"}, ["written_at"]),
        ({"memory_class": "case-notes", "value": None}, ["value", "memory_class"]),
        ({"purpose": "marketing"}, ["purpose"]),
    ],
)
def test_a_claim_contradicting_its_record_is_422(collectible, agent, stated, mismatched):
    memory = remember(agent)
    response = recall(agent, {"memory_id": memory["memory_id"], **stated})
    body = response.json()
    assert (response.status_code, body["code"]) == (422, "claim_memory_mismatch")
    assert body["mismatched"] == mismatched
    assert (body["index"], body["memory_id"]) == (0, memory["memory_id"])
    assert not DecisionSnapshot.objects.exists()


def test_an_unknown_memory_is_an_unknown_reference(collectible, agent):
    response = recall(agent, {"memory_id": "mem-nowhere"})
    body = response.json()
    assert (response.status_code, body["code"]) == (400, "unknown_reference")
    assert body["missing"] == ["mem-nowhere"]
    assert not DecisionSnapshot.objects.exists()


def test_another_agents_memory_is_an_unknown_reference(collectible, agent):
    other = make_agent("other-agent", [f"{COLLECTIONS}:release_collections_hold"])
    theirs = remember(agent)
    response = recall(other, {"memory_id": theirs["memory_id"]})
    assert (response.status_code, response.json()["code"]) == (400, "unknown_reference")
    assert response.json()["missing"] == [theirs["memory_id"]]


def test_an_operator_may_recall_any_memory(collectible, agent, operator):
    Capability.objects.create(
        principal=operator.principal, decision_class=COLLECTIONS, action="release_collections_hold"
    )
    memory = remember(agent)
    body = recalled(operator, {"memory_id": memory["memory_id"]})
    assert body["claims"][0]["memory_id"] == memory["memory_id"]


def test_a_claim_without_memory_needs_subject_field_and_value(collectible, agent):
    response = recall(agent, {"field": "collections_status", "value": "collect"})
    body = response.json()
    assert (response.status_code, body["code"]) == (400, "invalid_request")
    assert "subject" in body["errors"]["claims"]["0"]


def test_a_fact_record_recalled_needs_the_field_it_speaks_to(collectible, agent):
    fact = remember(
        agent,
        field="",
        fact_key="collections.account-17.status",
        memory_class="operational",
        owner="servicing-team",
        source_revision="r1",
    )
    missing = recall(agent, {"memory_id": fact["memory_id"]})
    assert (missing.status_code, missing.json()["code"]) == (422, "claim_field_missing")
    body = recalled(agent, {"memory_id": fact["memory_id"], "field": "collections_status"})
    assert body["claims"][0]["verdict"] == "confirmed"


def test_a_claim_without_memory_hashes_as_before(collectible, agent, now):
    """Snapshots issued before claims could name a record keep their shape (and hash)."""
    body = recalled(
        agent,
        {
            "subject": SUBJECT,
            "field": "collections_status",
            "value": "collect",
            "written_at": now.isoformat(),
        },
    )
    content = DecisionSnapshot.objects.get(snapshot_id=body["snapshot_id"]).content
    assert set(content["claims"][0]) == {
        "index",
        "subject",
        "field",
        "value",
        "written_at",
        "memory_class",
        "purpose",
        "derived_from",
        "note",
        "verdict",
        "reason",
        "evidence",
    }
    assert "quarantined_memories" not in content
    assert "memory_id" not in body["claims"][0]


def test_replay_of_a_recalled_claim_is_exact(collectible, agent):
    memory = remember(agent, value="hold")
    body = recalled(agent, {"memory_id": memory["memory_id"]})
    assert body["claims"][0]["verdict"] == "superseded"
    for mode in ("as_recorded", "corrected"):
        replay = agent.post(f"/api/v1/snapshots/{body['snapshot_id']}/replay", {"mode": mode})
        assert replay.json()["exact"] is True, replay.json()


def test_the_memory_joins_the_snapshots_lineage(
    collectible, agent, operator, eager_tasks, django_capture_on_commit_callbacks
):
    memory = remember(agent)
    snapshot = recalled(agent, {"memory_id": memory["memory_id"]})
    with django_capture_on_commit_callbacks(execute=True):
        assert commit(agent, snapshot, "release_collections_hold", "released", "r-1").status_code
    node = f"memory:{memory['memory_id']}"
    body = operator.client.get(f"/api/v1/lineage/{node}/descendants").json()
    assert body["counts"]["snapshot"] == body["counts"]["decision"] == 1
    assert body["counts"]["effect"] == 1
    nodes = {item["node"] for item in body["nodes"]}
    assert {f"snapshot:{snapshot['snapshot_id']}", "effect:r-1"} <= nodes
    ancestors = operator.client.get(f"/api/v1/lineage/snapshot:{snapshot['snapshot_id']}/ancestors")
    assert node in {item["node"] for item in ancestors.json()["nodes"]}
    by_class = operator.client.get("/api/v1/lineage/blast-radius", {"memory_class": "episodic"})
    assert by_class.json()["counts"]["snapshot"] == 1
    assert by_class.json()["counts"]["effect"] == 1
    # A memory derived from the decision descends from the recalled one too.
    derived = remember(agent, derived_from=[f"snapshot:{snapshot['snapshot_id']}"])
    body = operator.client.get(f"/api/v1/lineage/{node}/descendants").json()
    assert f"memory:{derived['memory_id']}" in {item["node"] for item in body["nodes"]}


def test_a_claim_stated_without_its_record_feeds_no_memory(collectible, agent, operator):
    memory = remember(agent)
    recalled(
        agent,
        {"subject": SUBJECT, "field": "collections_status", "value": "collect"},
    )
    body = operator.client.get(f"/api/v1/lineage/memory:{memory['memory_id']}/descendants").json()
    assert body["counts"].get("snapshot", 0) == 0


def test_recalling_many_records_costs_what_recalling_one_does(collectible, agent):
    memories = [remember(agent)["memory_id"] for _ in range(8)]

    def queries(memory_ids: list[str]) -> int:
        with CaptureQueriesContext(connection) as captured:
            recalled(agent, *({"memory_id": memory_id} for memory_id in memory_ids))
        return len(captured)

    queries(memories[:1])  # warm: the first reconcile compiles and caches the contract
    assert queries(memories[:1]) == queries(memories)


def test_a_service_caller_drafting_a_claim_without_record_or_subject_is_refused(collectible, agent):
    """The API's serializer refuses such a claim first; the service refuses it too."""
    with pytest.raises(ValidationFailed) as refused:
        claims_recall(
            principal=agent.principal, claims=[ClaimDraft(field="collections_status", value=1)]
        )
    assert (refused.value.code, refused.value.extra["missing"]) == ("claim_incomplete", ["subject"])
