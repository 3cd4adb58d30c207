"""Escalations opened by ambiguity: one per key, a write freeze, and reviewer decisions."""

from __future__ import annotations

import pytest

from reconcile_app.models import AuditEvent, Escalation, MemoryRecord
from reconcile_app.services.escalations import escalation_open_for_fact
from tests.conftest import make_person
from tests.reconcile_app.facts.conftest import REGISTRY, authority, current, remember

KEY = "baseline.math-eval"


@pytest.fixture
def ambiguous(registry, agent):
    authority(KEY)
    remember(agent, KEY, "baseline-v17", "ckpt-0412", "registry@r17")
    remember(
        agent,
        KEY,
        "baseline-v18",
        "ckpt-0519",
        "registry@r18",
        valid_until="2026-12-31",
        supersedes="baseline-v17",
    )
    remember(agent, KEY, "baseline-v18b", "ckpt-0520", "registry@r18", valid_until="2026-12-31")
    return current(agent, KEY).json()["escalation_id"]


def decide(persona, escalation_id: str, verb: str, **body):
    return persona.post(f"/api/v1/escalations/{escalation_id}/{verb}", body)


def test_escalation_carries_the_seed_fields(ambiguous, agent):
    body = agent.client.get(f"/api/v1/escalations/{ambiguous}").json()
    assert body["code"] == "authority_ambiguous"
    assert body["fact_key"] == KEY
    assert body["candidate_refs"] == ["baseline-v18", "baseline-v18b"]
    assert body["owner"] == "eval-registry"
    assert body["next_action"]
    assert body["allowed_until_resolved"] == ["read_history"]
    assert body["write_allowed"] is False
    assert body["requested_by"] == agent.name
    assert body["status"] == "open"


def test_repeated_requests_reuse_one_escalation_per_key(ambiguous, agent, operator):
    again = current(operator, KEY).json()["escalation_id"]
    assert again == ambiguous
    assert Escalation.objects.filter(fact_key=KEY).count() == 1
    listed = operator.client.get("/api/v1/escalations", {"status": "open"}).json()
    assert [item["escalation_id"] for item in listed["results"]] == [ambiguous]


def test_open_escalation_freezes_writes_but_not_history(ambiguous, agent):
    response = agent.post(
        "/api/v1/memories",
        {
            "memory_class": "operational",
            "subject": "math-eval",
            "purpose": "nightly-eval-summary",
            "fact_key": KEY,
            "value": "ckpt-0521",
            "owner": "eval-registry",
            "source_revision": "registry@r18",
            "derived_from": ["ev-registry-r18"],
        },
    )
    assert response.status_code == 423
    assert response.json()["code"] == "fact_key_frozen"
    assert response.json()["escalation_id"] == ambiguous
    history = agent.client.get("/api/v1/memories", {"fact_key": KEY}).json()
    assert {item["memory_id"] for item in history["results"]} == {
        "baseline-v17",
        "baseline-v18",
        "baseline-v18b",
    }


def test_ownerless_record_escalates_to_the_owner_the_registry_names(registry, agent):
    key = "baseline.orphan"
    authority(key, owner="")
    remember(agent, key, "orphan-1", "ckpt-1", "registry@r18", owner=None)
    # A registry that names no owner is no authority: nothing is selected, nothing escalated.
    assert current(agent, key).status_code == 503
    authority(key, owner="eval-registry")
    escalation = Escalation.objects.get(escalation_id=current(agent, key).json()["escalation_id"])
    assert (escalation.code, escalation.owner) == ("owner_missing", "eval-registry")


def test_reviewer_approval_selects_one_and_retires_the_others(ambiguous, agent, reviewer):
    response = decide(
        reviewer,
        ambiguous,
        "approve",
        rationale="registry confirms v18",
        selected_ref="baseline-v18",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "approved"
    assert body["decided_by"] == reviewer.name
    assert body["write_allowed"] is True
    assert MemoryRecord.objects.get(memory_id="baseline-v18b").status == "historical_only"
    assert MemoryRecord.objects.get(memory_id="baseline-v18").status == "current"
    assert current(agent, KEY).json()["fact"]["memory_id"] == "baseline-v18"
    audit = AuditEvent.objects.get(action="escalation.approve")
    assert (audit.actor_name, audit.object_ref, audit.reason) == (
        reviewer.name,
        ambiguous,
        "registry confirms v18",
    )
    assert audit.after["retired"] == ["baseline-v18b"]


def test_approval_never_keeps_a_record_no_longer_in_force(ambiguous, agent, reviewer):
    """baseline-v18 expired while the question was open: approving it "kept" a record out of
    force and retired v18b, the one still valid, so the key had no current record at all."""
    from reconcile_app.services.memory_status import memory_status_move

    expired = MemoryRecord.objects.get(memory_id="baseline-v18")
    memory_status_move(
        memory_ids=[expired.pk], source_statuses=["current"], to="expired", cause="test"
    )
    response = decide(
        reviewer, ambiguous, "approve", rationale="registry says v18", selected_ref="baseline-v18"
    )
    assert (response.status_code, response.json()["code"]) == (400, "invalid_selection")
    assert response.json()["candidates"] == ["baseline-v18b"]
    assert MemoryRecord.objects.get(memory_id="baseline-v18b").status == "current"
    assert Escalation.objects.get(escalation_id=ambiguous).status == "open"


def test_an_ownerless_record_is_never_kept(registry, agent, reviewer):
    """Approving an ownerless record's escalation selecting the ownerless record retired the
    owned one, kept the ownerless one current, and the next read escalated owner_missing
    again: the decision settled nothing and threw the valid record away."""
    key = "baseline.orphan"
    authority(key)
    remember(agent, key, "owned-1", "ckpt-1", "registry@r18")
    remember(agent, key, "orphan-1", "ckpt-2", "registry@r18", owner=None)
    escalation_id = current(agent, key).json()["escalation_id"]

    response = decide(
        reviewer, escalation_id, "approve", rationale="keep it", selected_ref="orphan-1"
    )
    assert (response.status_code, response.json()["code"]) == (400, "invalid_selection")
    assert response.json()["candidates"] == ["owned-1"]
    assert set(MemoryRecord.objects.filter(fact_key=key).values_list("status", flat=True)) == {
        "current"
    }
    assert Escalation.objects.get(escalation_id=escalation_id).status == "open"


def test_approving_an_ambiguity_requires_a_candidate(ambiguous, reviewer):
    missing = decide(reviewer, ambiguous, "approve", rationale="ok")
    assert (missing.status_code, missing.json()["code"]) == (400, "selection_required")
    wrong = decide(reviewer, ambiguous, "approve", rationale="ok", selected_ref="baseline-v17")
    assert (wrong.status_code, wrong.json()["code"]) == (400, "invalid_selection")
    assert Escalation.objects.get(escalation_id=ambiguous).status == "open"


def test_rationale_is_required(ambiguous, reviewer):
    response = decide(reviewer, ambiguous, "reject", rationale="")
    assert response.status_code == 400


def test_reject_records_the_decision_and_changes_no_record(ambiguous, reviewer):
    response = decide(reviewer, ambiguous, "reject", rationale="ask the eval team first")
    assert response.json()["status"] == "rejected"
    assert MemoryRecord.objects.filter(fact_key=KEY, status="current").count() == 2
    assert AuditEvent.objects.filter(action="escalation.reject", object_ref=ambiguous).exists()


def test_a_rejection_keeps_no_selection(ambiguous, reviewer):
    """A rejection keeps nothing: a `selected_ref` sent with it was stored, and the
    escalation's page then badged that candidate "kept" beside two records left current."""
    response = decide(
        reviewer, ambiguous, "reject", rationale="ask the eval team", selected_ref="baseline-v18"
    )
    assert (response.status_code, response.json()["code"]) == (400, "invalid_selection")
    escalation = Escalation.objects.get(escalation_id=ambiguous)
    assert (escalation.status, escalation.selected_ref) == ("open", "")


def test_only_reviewers_decide(ambiguous, operator, auditor, agent):
    for persona in (operator, auditor, agent):
        response = decide(persona, ambiguous, "approve", rationale="x", selected_ref="baseline-v18")
        assert response.status_code == 403, persona.name


def test_reviewer_cannot_decide_an_escalation_they_raised(registry, agent, reviewer):
    authority(KEY)
    remember(agent, KEY, "r-1", "ckpt-0519", "registry@r18")
    remember(agent, KEY, "r-2", "ckpt-0520", "registry@r18")
    # A person's read opens no question (it names an open one); one the reviewer raised
    # before that rule, or by another route, stays theirs.
    assert current(reviewer, KEY).json()["escalation_id"] is None
    raised = escalation_open_for_fact(
        code="authority_ambiguous",
        fact_key=KEY,
        candidate_refs=["r-1", "r-2"],
        authority_owner=REGISTRY,
        requested_by=reviewer.principal,
    ).escalation_id
    response = decide(reviewer, raised, "approve", rationale="mine", selected_ref="r-1")
    assert response.status_code == 403
    assert response.json()["code"] == "self_approval_forbidden"
    assert Escalation.objects.get(escalation_id=raised).status == "open"
    # The attempt is on the record, with who, when and why (the decision itself rolled back).
    [attempt] = AuditEvent.objects.filter(object_ref=raised)
    assert (attempt.action, attempt.actor, attempt.reason) == (
        "escalation.approve.refused",
        reviewer.user,
        "mine",
    )
    assert attempt.after["code"] == "self_approval_forbidden"
    assert attempt.request_id == response["X-Request-ID"]


def test_a_decided_escalation_cannot_be_decided_again(ambiguous, reviewer):
    decide(reviewer, ambiguous, "reject", rationale="no")
    again = decide(reviewer, ambiguous, "approve", rationale="yes", selected_ref="baseline-v18")
    assert (again.status_code, again.json()["code"]) == (409, "already_decided")


def test_reviewer_cannot_select_a_record_they_wrote(registry, agent):
    """Operators may write any fact record; one who is also a reviewer must not then settle
    the ambiguity in favour of their own record: that is approving their own change."""
    both = make_person("rowan-both", ["operator", "reviewer"])
    authority(KEY)
    remember(agent, KEY, "theirs", "ckpt-0519", "registry@r18")
    remember(both, KEY, "mine", "ckpt-0520", "registry@r18")
    raised = current(agent, KEY).json()["escalation_id"]  # raised by the agent, not the reviewer

    response = decide(both, raised, "approve", rationale="mine is right", selected_ref="mine")
    assert (response.status_code, response.json()["code"]) == (403, "self_approval_forbidden")
    assert response.json()["kept"] == ["mine"]
    assert Escalation.objects.get(escalation_id=raised).status == "open"
    [attempt] = AuditEvent.objects.filter(object_ref=raised, action="escalation.approve.refused")
    assert attempt.after["kept"] == ["mine"]
    assert MemoryRecord.objects.filter(fact_key=KEY, status="current").count() == 2
    # Another candidate, or a rejection, is theirs to decide.
    response = decide(both, raised, "approve", rationale="the registry's", selected_ref="theirs")
    assert response.json()["status"] == "approved"
    assert MemoryRecord.objects.get(memory_id="mine").status == "historical_only"


def test_reviewer_cannot_keep_their_own_record_by_retiring_the_ownerless(registry, agent):
    """Approving an owner_missing escalation without a selection retires the ownerless
    records and keeps the owned ones: not when the reviewer wrote one of those."""
    both = make_person("rowan-both", ["operator", "reviewer"])
    key = "baseline.orphan"
    authority(key)
    remember(both, key, "mine", "ckpt-1", "registry@r18")
    remember(agent, key, "orphan", "ckpt-2", "registry@r18", owner=None)
    raised = current(agent, key).json()["escalation_id"]
    assert Escalation.objects.get(escalation_id=raised).code == "owner_missing"

    response = decide(both, raised, "approve", rationale="drop the orphan")
    assert (response.status_code, response.json()["code"]) == (403, "self_approval_forbidden")
    assert response.json()["kept"] == ["mine"]
    assert MemoryRecord.objects.get(memory_id="orphan").status == "current"
    assert decide(both, raised, "reject", rationale="not mine to say").status_code == 200


def test_what_would_not_be_kept_is_refused_for_what_it_is(registry, agent):
    """A record of another key is no candidate (422), and a decided escalation is decided
    (409), whoever wrote the record named."""
    both = make_person("rowan-both", ["operator", "reviewer"])
    authority(KEY)
    remember(agent, KEY, "theirs", "ckpt-0519", "registry@r18")
    remember(agent, KEY, "also-theirs", "ckpt-0520", "registry@r18")
    authority("baseline.elsewhere")
    remember(both, "baseline.elsewhere", "elsewhere", "ckpt-1", "registry@r18")
    raised = current(agent, KEY).json()["escalation_id"]

    response = decide(both, raised, "approve", rationale="x", selected_ref="elsewhere")
    assert (response.status_code, response.json()["code"]) == (400, "invalid_selection")
    assert decide(both, raised, "approve", rationale="x", selected_ref="theirs").status_code == 200
    response = decide(both, raised, "approve", rationale="x", selected_ref="elsewhere")
    assert (response.status_code, response.json()["code"]) == (409, "already_decided")


def test_an_agent_that_only_asks_about_a_key_can_follow_the_escalation_it_is_given(
    ambiguous, agent, outsider
):
    """`facts/{key}/current` names the key's open escalation to any agent that asks; that
    agent then polls it, without learning which agent asked first."""
    answer = current(outsider, KEY)
    assert answer.json()["escalation_id"] == ambiguous

    followed = outsider.client.get(f"/api/v1/escalations/{ambiguous}")
    assert followed.status_code == 200, followed.content
    assert (followed.json()["status"], followed.json()["fact_key"]) == ("open", KEY)
    assert followed.json()["requested_by"] is None  # the agent that raised it is another
    listed = outsider.client.get("/api/v1/escalations").json()["results"]
    assert [(item["escalation_id"], item["requested_by"]) for item in listed] == [(ambiguous, None)]
    own = agent.client.get(f"/api/v1/escalations/{ambiguous}").json()
    assert own["requested_by"] == agent.name
