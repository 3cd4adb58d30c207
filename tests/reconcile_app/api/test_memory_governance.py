"""What review means for memory (docs/api.md "Memory classes", `POST /api/v1/memories`): a
memory admitted without review cannot retire a reviewed one or carry forward a belief no
reviewer admitted; two suggestions cannot both replace one record; withdrawn consent admits
no preference; a memory already expired is not written as current."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from reconcile_app.models import MemoryClass, MemoryRecord
from reconcile_app.services.memory import fact_today
from tests.conftest import make_person
from tests.reconcile_app.api.test_memory_admission import (  # noqa: F401 (fixtures)
    body,
    consent,
    observed,
    preference,
)
from tests.reconcile_app.api.test_promotions import decide, status_of, suggest

MEMORIES = "/api/v1/memories"


def promoted(agent, reviewer, **extra) -> str:
    memory = suggest(agent, **extra)
    answer = decide(reviewer, memory["promotion_escalation_id"], "approve")
    assert answer.status_code == 200, answer.content
    return memory["memory_id"]


def test_a_direct_write_cannot_retire_a_reviewed_memory(agent, reviewer, observed):
    runbook = promoted(agent, reviewer)
    response = agent.post(MEMORIES, body(value="no need to read again", supersedes=runbook))
    assert (response.status_code, response.json()["code"]) == (409, "supersession_needs_review")
    assert status_of(runbook) == "active"
    assert MemoryRecord.objects.count() == 1
    # Through review, it may: the replacement is a suggestion a reviewer promotes.
    replacement = suggest(agent, value="read again, then retry once", supersedes=runbook)
    assert replacement["status"] == "suggested" and status_of(runbook) == "active"


def test_no_memory_in_force_derives_from_a_belief_no_reviewer_admitted(agent, reviewer, observed):
    suggestion = suggest(agent)
    copied = body(
        value="contact even in hardship", derived_from=[f"memory:{suggestion['memory_id']}"]
    )
    response = agent.post(MEMORIES, copied)
    assert (response.status_code, response.json()["code"]) == (409, "derivation_not_admitted")
    assert response.json()["memory_ids"] == [suggestion["memory_id"]]
    decide(reviewer, suggestion["promotion_escalation_id"], "reject")
    again = agent.post(MEMORIES, copied)
    assert (again.status_code, again.json()["code"]) == (409, "derivation_not_admitted")
    assert MemoryRecord.objects.count() == 1
    # A revision suggested for review may name it: a reviewer sees both.
    revision = agent.post(MEMORIES, {**copied, "memory_class": "runbooks"})
    assert revision.status_code == 201 and revision.json()["status"] == "suggested"


def test_two_suggestions_cannot_both_replace_one_record(agent, reviewer, observed):
    original = promoted(agent, reviewer)
    first = suggest(agent, value="first revision", supersedes=original)
    second = suggest(agent, value="second revision", supersedes=original)
    assert decide(reviewer, first["promotion_escalation_id"], "approve").status_code == 200
    other_reviewer = make_person("rita-reviewer", "reviewer")
    refused = decide(other_reviewer, second["promotion_escalation_id"], "approve")
    assert (refused.status_code, refused.json()["code"]) == (409, "supersession_conflict")
    assert refused.json()["superseded"] == original
    assert status_of(second["memory_id"]) == "suggested"
    assert (status_of(original), status_of(first["memory_id"])) == ("superseded", "active")
    escalation = agent.get(f"/api/v1/escalations/{second['promotion_escalation_id']}").json()
    assert escalation["status"] == "open"  # nothing moved: it can still be rejected
    assert decide(other_reviewer, second["promotion_escalation_id"], "reject").status_code == 200


def test_withdrawn_consent_admits_no_preference(agent, operator, consent):
    revoked = operator.post(
        "/api/v1/corrections", {"evidence_id": consent, "reason": "consent withdrawn by phone"}
    )
    assert revoked.status_code == 201, revoked.content
    response = agent.post(MEMORIES, preference(consent, "sms"))
    assert (response.status_code, response.json()["code"]) == (422, "consent_missing")
    assert not MemoryRecord.objects.exists()


def test_a_memory_already_expired_is_not_written_as_current(agent, observed):
    yesterday = (fact_today() - timedelta(days=1)).isoformat()
    response = agent.post(MEMORIES, body(valid_until=yesterday))
    assert (response.status_code, response.json()["code"]) == (422, "valid_until_past")
    assert not MemoryRecord.objects.exists()
    today = agent.post(MEMORIES, body(valid_until=fact_today().isoformat()))
    assert today.status_code == 201 and today.json()["status"] == "current"  # inclusive


def test_a_ttl_past_the_calendars_end_keeps_the_memory_to_its_last_day(agent, observed):
    """A class stored with a TTL no date can hold (loaded before `load_contracts` bounded
    it; SQLite kept any integer): its writes answered 500 (date overflow)."""
    MemoryClass.objects.filter(name="episodic").update(default_ttl_days=3_000_000)
    response = agent.post(MEMORIES, body())
    assert response.status_code == 201, response.content
    assert response.json()["valid_until"] == "9999-12-31"


def test_a_memory_dated_ahead_of_the_clock_is_refused(agent, observed):
    """Recalled, it would read as newer than every observation to come: a state that
    replaced it could never show as superseding it (an observation is refused alike)."""
    ahead = (timezone.now() + timedelta(days=30)).isoformat()
    response = agent.post(MEMORIES, body(written_at=ahead))
    assert (response.status_code, response.json()["code"]) == (422, "written_in_future")
    assert not MemoryRecord.objects.exists()
    skewed = (timezone.now() + timedelta(seconds=60)).isoformat()
    assert agent.post(MEMORIES, body(written_at=skewed)).status_code == 201  # clock skew


def test_nothing_is_promoted_into_a_quarantined_class(agent, reviewer, operator, observed):
    suggestion = suggest(agent)
    held = operator.post(
        "/api/v1/quarantines",
        {"scope": "memory_class", "target": "runbooks", "reason": "a poisoned procedure"},
    )
    assert held.status_code == 202, held.content
    refused = decide(reviewer, suggestion["promotion_escalation_id"], "approve")
    assert (refused.status_code, refused.json()["code"]) == (423, "memory_class_quarantined")
    assert status_of(suggestion["memory_id"]) == "suggested"
    operator.post(f"/api/v1/quarantines/{held.json()['id']}/lift", {"reason": "cleaned"})
    assert decide(reviewer, suggestion["promotion_escalation_id"], "approve").status_code == 200
    assert status_of(suggestion["memory_id"]) == "active"


def test_a_record_that_expired_while_its_successor_waited_is_no_conflict(agent, reviewer, observed):
    """Only a record another memory superseded first has a successor already."""
    original = promoted(agent, reviewer)
    waiting = suggest(agent, value="revised", supersedes=original)
    MemoryRecord.objects.filter(memory_id=original).update(status="expired")
    answer = decide(reviewer, waiting["promotion_escalation_id"], "approve")
    assert answer.status_code == 200, answer.content
    assert (status_of(waiting["memory_id"]), status_of(original)) == ("active", "expired")


def test_a_suggestion_quarantined_on_its_own_is_not_promoted(agent, reviewer, operator, observed):
    """A quarantine of the one record (a poisoned suggestion) held its claims but not its
    promotion: a reviewer brought it into force, and `facts/current` then served it."""
    suggestion = suggest(agent)
    held = operator.post(
        "/api/v1/quarantines",
        {"scope": "memory", "target": suggestion["memory_id"], "reason": "planted by a prompt"},
    )
    assert held.status_code == 202, held.content
    refused = decide(reviewer, suggestion["promotion_escalation_id"], "approve")
    assert (refused.status_code, refused.json()["code"]) == (423, "memory_quarantined")
    assert refused.json()["quarantine_id"] == held.json()["id"]
    assert status_of(suggestion["memory_id"]) == "suggested"
    rejected = decide(reviewer, suggestion["promotion_escalation_id"], "reject")
    assert rejected.status_code == 200 and status_of(suggestion["memory_id"]) == "rejected"
