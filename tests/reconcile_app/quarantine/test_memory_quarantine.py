"""Quarantine scope `memory`: one record, not its class (docs/api.md "Quarantine")."""

from __future__ import annotations

from typing import Any

from reconcile_app.models import AuditEvent, ClaimVerdict, Quarantine
from tests.reconcile_app.api.test_recall import recalled, remember
from tests.reconcile_app.effects.conftest import SUBJECT, collectible, commit  # noqa: F401


def quarantine(operator, target: str, reason: str = "poisoned by a prompt injection") -> Any:
    return operator.post(
        "/api/v1/quarantines", {"scope": "memory", "target": target, "reason": reason}
    )


def descendants(operator, memory_id: str) -> dict[str, Any]:
    return operator.client.get(f"/api/v1/lineage/memory:{memory_id}/descendants").json()


def test_apply_lists_the_claims_and_everything_the_record_fed(
    collectible, agent, operator, eager_tasks, django_capture_on_commit_callbacks
):
    memory = remember(agent)
    first = recalled(agent, {"memory_id": memory["memory_id"]})
    recalled(agent, {"memory_id": memory["memory_id"]})
    assert commit(agent, first, "release_collections_hold", "released", "m-1").status_code == 201
    with django_capture_on_commit_callbacks(execute=True):
        created = quarantine(operator, memory["memory_id"])
    assert created.status_code == 202, created.content
    assert (created.json()["scope"], created.json()["target"]) == ("memory", memory["memory_id"])
    applied = operator.client.get(f"/api/v1/quarantines/{created.json()['id']}").json()
    assert applied["status"] == "applied"
    assert applied["affected"]["claims"] == 2
    assert applied["affected"]["downstream_snapshot"] == 2
    assert applied["affected"]["downstream_decision"] == 2
    assert applied["affected"]["downstream_effect"] == 1


def test_claims_citing_it_are_quarantined_and_nothing_else_changes(collectible, agent, operator):
    poisoned = remember(agent)
    sound = remember(agent)
    before = recalled(agent, {"memory_id": poisoned["memory_id"]})
    quarantined = quarantine(operator, poisoned["memory_id"]).json()
    fed_before = descendants(operator, poisoned["memory_id"])["counts"]

    body = recalled(
        agent,
        {"memory_id": poisoned["memory_id"]},
        {"memory_id": sound["memory_id"]},
        {"subject": SUBJECT, "field": "collections_status", "value": "collect"},
    )
    claims = body["claims"]
    assert [claim["verdict"] for claim in claims] == ["quarantined", "confirmed", "confirmed"]
    assert poisoned["memory_id"] in claims[0]["reason"]
    assert quarantined["id"] in claims[0]["reason"]
    assert claims[0]["memory_id"] == poisoned["memory_id"]
    # The decision rests on the owner's reads, as before the quarantine.
    assert body["decision"] == before["decision"]
    # A quarantined record feeds nothing new: no edge to the new snapshot.
    assert descendants(operator, poisoned["memory_id"])["counts"] == fed_before
    fed_sound = {item["node"] for item in descendants(operator, sound["memory_id"])["nodes"]}
    assert f"snapshot:{body['snapshot_id']}" in fed_sound
    # Its class is not quarantined: records of it are still written and recalled.
    assert remember(agent)["status"] == "current"
    record = agent.client.get(f"/api/v1/memories/{poisoned['memory_id']}").json()
    assert record["status"] == "current"


def test_a_quarantined_record_is_quarantined_even_out_of_scope(collectible, agent, operator):
    poisoned = remember(agent, subject="account-18")
    quarantine(operator, poisoned["memory_id"])
    body = recalled(agent, {"memory_id": poisoned["memory_id"]})
    assert body["claims"][0]["verdict"] == "quarantined"
    assert descendants(operator, poisoned["memory_id"])["counts"].get("snapshot", 0) == 0


def test_replay_of_a_quarantined_claim_is_exact_after_the_lift(collectible, agent, operator):
    poisoned = remember(agent)
    created = quarantine(operator, poisoned["memory_id"]).json()
    body = recalled(agent, {"memory_id": poisoned["memory_id"]})
    operator.post(f"/api/v1/quarantines/{created['id']}/lift", {"reason": "record checked"})
    replay = agent.post(f"/api/v1/snapshots/{body['snapshot_id']}/replay", {}).json()
    assert replay["exact"] is True, replay


def test_lift_restores_the_record_and_both_actions_are_audited(collectible, agent, operator):
    poisoned = remember(agent)
    created = quarantine(operator, poisoned["memory_id"]).json()
    assert recalled(agent, {"memory_id": poisoned["memory_id"]})["claims"][0]["verdict"] == (
        "quarantined"
    )
    lifted = operator.post(
        f"/api/v1/quarantines/{created['id']}/lift", {"reason": "the record was checked"}
    )
    assert lifted.status_code == 200 and lifted.json()["status"] == "lifted"
    body = recalled(agent, {"memory_id": poisoned["memory_id"]})
    assert body["claims"][0]["verdict"] == "confirmed"
    fed = {item["node"] for item in descendants(operator, poisoned["memory_id"])["nodes"]}
    assert f"snapshot:{body['snapshot_id']}" in fed
    audit = AuditEvent.objects.filter(object_ref=created["id"]).order_by("at")
    assert [(row.action, row.after.get("scope")) for row in audit] == [
        ("quarantine.create", "memory"),
        ("quarantine.lift", None),
    ]
    assert ClaimVerdict.objects.filter(memory_id=poisoned["memory_id"]).count() == 2


def test_unknown_memory_and_double_quarantine_are_refused(collectible, agent, operator):
    unknown = quarantine(operator, "mem-nowhere")
    assert (unknown.status_code, unknown.json()["code"]) == (400, "unknown_memory")
    memory = remember(agent)
    assert quarantine(operator, memory["memory_id"]).status_code == 202
    twice = quarantine(operator, memory["memory_id"])
    assert (twice.status_code, twice.json()["code"]) == (409, "already_quarantined")
    assert Quarantine.objects.filter(scope="memory").count() == 1


def test_only_operators_quarantine_a_memory(collectible, agent, reviewer, auditor):
    memory = remember(agent)
    for persona in (agent, reviewer, auditor):
        assert quarantine(persona, memory["memory_id"]).status_code == 403
    assert not Quarantine.objects.exists()


def test_the_list_filters_by_scope_memory(collectible, agent, operator):
    memory = remember(agent)
    quarantine(operator, memory["memory_id"])
    operator.post(
        "/api/v1/quarantines", {"scope": "memory_class", "target": "runbooks", "reason": "x"}
    )
    listed = operator.client.get("/api/v1/quarantines", {"scope": "memory"}).json()["results"]
    assert [(row["scope"], row["target"]) for row in listed] == [("memory", memory["memory_id"])]


def test_metrics_count_memory_quarantines_by_scope(collectible, agent, operator):
    quarantine(operator, remember(agent)["memory_id"])
    figures = operator.client.get("/api/v1/metrics").json()
    assert figures["quarantines"]["by_scope"] == {"memory": 1}
    text = operator.client.get("/metrics").content.decode()
    assert 'reconcile_quarantines_active{scope="memory"} 1' in text
