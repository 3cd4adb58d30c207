"""Review classes over HTTP (docs/api.md "Memory classes", "Escalations"): a procedural or
policy memory is created `suggested` with a promotion escalation; a reviewer other than the
writer approves it (→ `active`, and only then is what it supersedes superseded) or rejects
it (→ `rejected`); every decision is audited on the escalation and on the memory."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from reconcile_app.models import AuditEvent, Escalation, MemoryRecord, MemoryStatusEvent
from reconcile_app.services.corrections import correction_create
from tests.conftest import Persona, make_agent, make_person
from tests.factories import ACCOUNT, EvidenceFactory
from tests.reconcile_app.effects.conftest import collectible, reconcile  # noqa: F401
from tests.reconcile_app.facts.conftest import (  # noqa: F401 (registry is a fixture)
    authority,
    current,
    registry,
    remember,
)

MEMORIES = "/api/v1/memories"
ESCALATIONS = "/api/v1/escalations"


@pytest.fixture
def observed(db):
    return EvidenceFactory(evidence_id="ev-seen", value="hold")


@pytest.fixture
def operator_reviewer(db) -> Persona:
    """A person with both roles: may write memories (operator) and decide (reviewer)."""
    person = make_person("dual-role", "operator")
    person.user.groups.add(Group.objects.get_or_create(name="reviewer")[0])
    return person


def runbook(**extra):
    body = {
        "memory_class": "runbooks",
        "subject": ACCOUNT,
        "purpose": "collections",
        "field": "collections_status",
        "value": "after a 412, read again before retrying",
        "derived_from": ["ev-seen"],
    }
    body.update(extra)
    return body


def suggest(persona: Persona, **extra) -> dict:
    response = persona.post(MEMORIES, runbook(**extra))
    assert response.status_code == 201, response.content
    return response.json()


def decide(persona: Persona, escalation_id: str, verb: str, rationale: str = "checked", **h):
    return persona.post(f"{ESCALATIONS}/{escalation_id}/{verb}", {"rationale": rationale}, **h)


def first_at(memory: dict):
    """When the first memory was promoted (its own move to active)."""
    return MemoryStatusEvent.objects.get(memory__memory_id=memory["memory_id"], status="active").at


def status_of(memory_id: str) -> str:
    return MemoryRecord.objects.get(memory_id=memory_id).status


def test_a_review_class_creates_a_suggestion_and_its_promotion(agent, observed):
    memory = suggest(agent)

    assert memory["status"] == "suggested"
    escalation_id = memory["promotion_escalation_id"]
    assert escalation_id
    assert agent.get(f"{MEMORIES}/{memory['memory_id']}").json() == {
        **memory,
        "grounds_corrected": [],
    }
    escalation = agent.get(f"{ESCALATIONS}/{escalation_id}").json()
    assert (escalation["code"], escalation["memory_id"], escalation["status"]) == (
        "promotion",
        memory["memory_id"],
        "open",
    )
    assert escalation["owner"] == "platform-operations"  # the class's owner
    assert escalation["requested_by"] == agent.name
    assert (escalation["snapshot_id"], escalation["fact_key"]) == (None, "")
    listed = agent.get(ESCALATIONS, status="open").json()["results"]
    assert [item["escalation_id"] for item in listed] == [escalation_id]


def test_escalations_that_are_not_promotions_have_no_memory(registry, agent):
    authority("baseline.x")
    remember(agent, "baseline.x", "x-1", "ckpt-1", "registry@r18")
    remember(agent, "baseline.x", "x-2", "ckpt-2", "registry@r18")
    escalation_id = current(agent, "baseline.x").json()["escalation_id"]
    escalation = agent.get(f"{ESCALATIONS}/{escalation_id}").json()
    assert (escalation["code"], escalation["memory_id"]) == ("authority_ambiguous", None)


def test_suggestions_are_listed_by_status(agent, observed):
    suggested = suggest(agent)["memory_id"]
    agent.post(MEMORIES, runbook(memory_class="episodic"))
    response = agent.get(MEMORIES, status="suggested")
    assert response.status_code == 200
    assert [item["memory_id"] for item in response.json()["results"]] == [suggested]
    assert all(item["promotion_escalation_id"] for item in response.json()["results"])


def test_another_agents_promotion_is_not_there(agent, observed):
    escalation_id = suggest(agent)["promotion_escalation_id"]
    rival = make_agent("rival-agent", [])
    assert rival.get(f"{ESCALATIONS}/{escalation_id}").status_code == 404
    assert rival.get(MEMORIES, status="suggested").json()["results"] == []


def test_approval_promotes_to_active_and_is_audited(agent, reviewer, observed):
    memory = suggest(agent)
    response = decide(
        reviewer,
        memory["promotion_escalation_id"],
        "approve",
        "matches the owner's runbook",
        HTTP_X_REQUEST_ID="req-promote-1",
    )

    assert response.status_code == 200, response.content
    assert (response.json()["status"], response.json()["memory_id"]) == (
        "approved",
        memory["memory_id"],
    )
    assert agent.get(f"{MEMORIES}/{memory['memory_id']}").json()["status"] == "active"
    history = MemoryStatusEvent.objects.filter(memory__memory_id=memory["memory_id"])
    assert list(history.values_list("status", flat=True)) == ["suggested", "active"]
    on_memory = AuditEvent.objects.get(action="memory.promote")
    assert (on_memory.object_kind, on_memory.object_ref) == ("memory", memory["memory_id"])
    assert (on_memory.actor, on_memory.reason, on_memory.request_id) == (
        reviewer.user,
        "matches the owner's runbook",
        "req-promote-1",
    )
    assert (on_memory.before, on_memory.after["status"]) == ({"status": "suggested"}, "active")
    on_escalation = AuditEvent.objects.get(action="escalation.approve")
    assert on_escalation.object_ref == memory["promotion_escalation_id"]
    assert on_escalation.request_id == "req-promote-1"


def test_rejection_keeps_it_as_rejected_history(agent, reviewer, observed):
    memory = suggest(agent)
    response = decide(reviewer, memory["promotion_escalation_id"], "reject", "not our procedure")

    assert response.status_code == 200, response.content
    assert status_of(memory["memory_id"]) == "rejected"
    audit = AuditEvent.objects.get(action="memory.reject")
    assert (audit.object_ref, audit.reason, audit.after["status"]) == (
        memory["memory_id"],
        "not our procedure",
        "rejected",
    )
    assert AuditEvent.objects.filter(action="escalation.reject").count() == 1
    # A rejected suggestion is not in force: nothing may supersede it.
    again = agent.post(MEMORIES, runbook(supersedes=memory["memory_id"]))
    assert (again.status_code, again.json()["code"]) == (409, "supersession_conflict")


def test_what_a_suggestion_supersedes_is_superseded_only_when_it_is_promoted(
    agent, reviewer, observed
):
    first = suggest(agent)
    decide(reviewer, first["promotion_escalation_id"], "approve")
    second = suggest(agent, value="read again, then retry once", supersedes=first["memory_id"])

    assert (second["status"], second["supersedes"]) == ("suggested", first["memory_id"])
    assert status_of(first["memory_id"]) == "active"  # still in force meanwhile

    decide(reviewer, second["promotion_escalation_id"], "approve")
    assert status_of(second["memory_id"]) == "active"
    assert status_of(first["memory_id"]) == "superseded"
    promoted = AuditEvent.objects.filter(action="memory.promote", object_ref=second["memory_id"])
    assert promoted.get().after["superseded"] == [first["memory_id"]]
    # Both moves happen at the decision's instant: as_of decided_at sees them together.
    decided_at = Escalation.objects.get(escalation_id=second["promotion_escalation_id"]).decided_at
    moves = MemoryStatusEvent.objects.filter(
        status__in=["active", "superseded"], at__gt=first_at(first)
    )
    assert set(moves.values_list("at", flat=True)) == {decided_at}


def test_a_rejected_suggestion_supersedes_nothing(agent, reviewer, observed):
    first = suggest(agent)
    decide(reviewer, first["promotion_escalation_id"], "approve")
    second = suggest(agent, value="never retry", supersedes=first["memory_id"])
    decide(reviewer, second["promotion_escalation_id"], "reject", "retrying once is right")
    assert (status_of(first["memory_id"]), status_of(second["memory_id"])) == (
        "active",
        "rejected",
    )


def test_a_suggestion_cannot_be_superseded(agent, observed):
    first = suggest(agent)
    response = agent.post(MEMORIES, runbook(supersedes=first["memory_id"]))
    assert (response.status_code, response.json()["code"]) == (409, "supersession_conflict")


def test_the_writer_may_not_approve_their_own_suggestion(operator_reviewer, reviewer, observed):
    memory = suggest(operator_reviewer)
    escalation_id = memory["promotion_escalation_id"]

    for verb in ("approve", "reject"):
        response = decide(operator_reviewer, escalation_id, verb, "I wrote it, I trust it")
        assert response.status_code == 403
        assert response["Content-Type"] == "application/problem+json"
        assert response.json()["code"] == "self_approval_forbidden"
    assert status_of(memory["memory_id"]) == "suggested"
    assert not AuditEvent.objects.filter(action__in=["memory.promote", "memory.reject"]).exists()

    # Any other reviewer may.
    assert decide(reviewer, escalation_id, "approve").status_code == 200
    assert status_of(memory["memory_id"]) == "active"


def test_only_reviewers_decide_promotions(agent, operator, auditor, observed):
    escalation_id = suggest(agent)["promotion_escalation_id"]
    for persona in (agent, operator, auditor):
        assert decide(persona, escalation_id, "approve").status_code == 403, persona.name
    assert Escalation.objects.get(escalation_id=escalation_id).status == "open"


def test_a_decision_needs_a_rationale_and_happens_once(agent, reviewer, observed):
    escalation_id = suggest(agent)["promotion_escalation_id"]
    blank = decide(reviewer, escalation_id, "approve", "  ")
    assert blank.status_code == 400
    decide(reviewer, escalation_id, "reject", "no")
    again = decide(reviewer, escalation_id, "approve", "yes after all")
    assert (again.status_code, again.json()["code"]) == (409, "already_decided")
    assert MemoryRecord.objects.get().status == "rejected"


def test_a_suggestion_whose_evidence_was_corrected_is_not_promoted(
    agent, reviewer, operator, observed
):
    """As a commit on a tainted snapshot is refused: the grounds of the belief were
    withdrawn after it was suggested, and approving it would bring it into force anyway."""
    memory = suggest(agent)
    correction = correction_create(evidence_id="ev-seen", reason="misread", actor=operator.user)

    response = decide(reviewer, memory["promotion_escalation_id"], "approve")

    assert response.status_code == 409, response.content
    problem = response.json()
    assert problem["code"] == "memory_tainted"
    assert problem["tainted_by"] == [correction.correction_id]
    assert correction.correction_id in problem["detail"] and "ev-seen" in problem["detail"]
    assert status_of(memory["memory_id"]) == "suggested"
    assert not AuditEvent.objects.filter(action="memory.promote").exists()
    rejected = decide(reviewer, memory["promotion_escalation_id"], "reject", "grounds withdrawn")
    assert rejected.status_code == 200, rejected.content
    assert status_of(memory["memory_id"]) == "rejected"


def test_a_suggestion_written_from_evidence_already_corrected_is_not_promoted_either(
    agent, reviewer, operator, observed
):
    """The refusal says what happened: the entry was corrected before the suggestion."""
    correction = correction_create(evidence_id="ev-seen", reason="misread", actor=operator.user)
    memory = suggest(agent)

    response = decide(reviewer, memory["promotion_escalation_id"], "approve")

    assert (response.status_code, response.json()["code"]) == (409, "memory_tainted")
    assert response.json()["tainted_by"] == [correction.correction_id]
    assert "since it was suggested" not in response.json()["detail"]
    assert status_of(memory["memory_id"]) == "suggested"


def test_a_suggestion_derived_from_a_snapshot_is_tainted_by_the_snapshots_evidence(
    collectible, agent, reviewer, operator
):
    """However far up: the memory derives from a snapshot, which used ev-collect."""
    snapshot = reconcile(agent)
    memory = suggest(agent, derived_from=[snapshot["snapshot_id"]])
    assert decide(reviewer, memory["promotion_escalation_id"], "approve", "x").status_code == 200

    later = suggest(agent, derived_from=[snapshot["snapshot_id"]], value="read twice")
    correction = correction_create(evidence_id="ev-collect", reason="wrong", actor=operator.user)
    response = decide(reviewer, later["promotion_escalation_id"], "approve")

    assert (response.status_code, response.json()["code"]) == (409, "memory_tainted")
    assert response.json()["tainted_by"] == [correction.correction_id]
    assert status_of(later["memory_id"]) == "suggested"


def test_a_suggestion_superseding_a_memory_on_corrected_evidence_is_promoted(
    agent, reviewer, operator, observed
):
    """The remedy the refusal names: a suggestion made from what holds now, superseding the
    memory whose evidence was corrected, comes into force. Superseding a record is not being
    made from its grounds (as a correction is not derived from the entry it replaces)."""
    first = suggest(agent)
    assert decide(reviewer, first["promotion_escalation_id"], "approve").status_code == 200
    correction_create(evidence_id="ev-seen", reason="misread", actor=operator.user)
    EvidenceFactory(evidence_id="ev-read-again", value="collect")

    second = suggest(agent, derived_from=["ev-read-again"], supersedes=first["memory_id"])
    response = decide(reviewer, second["promotion_escalation_id"], "approve")

    assert response.status_code == 200, response.content
    assert (status_of(second["memory_id"]), status_of(first["memory_id"])) == (
        "active",
        "superseded",
    )


def test_a_promotion_selects_no_record(observed, agent, reviewer):
    """Only a fact key's approval chooses among candidates: a `selected_ref` sent with a
    promotion's was stored and shown as the decision's, and chose nothing."""
    suggestion = suggest(agent)
    response = reviewer.post(
        f"{ESCALATIONS}/{suggestion['promotion_escalation_id']}/approve",
        {"rationale": "checked", "selected_ref": "somewhere-else"},
    )
    assert (response.status_code, response.json()["code"]) == (400, "invalid_selection")
    assert MemoryRecord.objects.get(memory_id=suggestion["memory_id"]).status == "suggested"
