"""POST /api/v1/memories under the class's rules (docs/api.md "Memory classes"): the class
must be declared, the kind decides the target, a preference needs consent, a memory without
valid_until gets its class's TTL (facts excepted), and a newer preference supersedes."""

from __future__ import annotations

from datetime import timedelta

import pytest

from reconcile_app.models import MemoryRecord, MemoryStatusEvent
from reconcile_app.services.memory import fact_today
from tests.factories import ACCOUNT, EvidenceFactory

MEMORIES = "/api/v1/memories"
EVIDENCE = "/api/v1/evidence"


@pytest.fixture
def observed(db):
    return EvidenceFactory(evidence_id="ev-seen", value="hold")


@pytest.fixture
def consent(agent, now):
    """The customer's consent to keep a contact preference, attested by the agent."""
    response = agent.post(
        EVIDENCE,
        {
            "kind": "consent",
            "subject": ACCOUNT,
            "field": "contact_channel",
            "value": "agreed to be contacted by the channel they choose",
            "source": "case-ledger",
            "observed_at": (now - timedelta(minutes=5)).isoformat(),
        },
    )
    assert response.status_code == 201, response.content
    return response.json()["evidence_id"]


def body(**extra):
    memory = {
        "memory_class": "episodic",
        "subject": ACCOUNT,
        "purpose": "collections",
        "field": "collections_status",
        "value": "hold",
        "derived_from": ["ev-seen"],
    }
    memory.update(extra)
    return memory


def preference(consent_id: str, value: str, **extra):
    return body(
        memory_class="customer-preferences",
        field="contact_channel",
        value=value,
        derived_from=[consent_id],
        **extra,
    )


def refused(response, status: int, code: str) -> None:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == code
    assert not MemoryRecord.objects.exists()


# --- The class and the kind -------------------------------------------------------------------


def test_a_memory_of_an_undeclared_class_is_refused(agent, observed):
    response = agent.post(MEMORIES, body(memory_class="scratchpad"))
    refused(response, 422, "memory_class_unknown")
    assert response.json()["memory_class"] == "scratchpad"


def test_a_fact_key_in_a_class_that_is_not_of_facts_is_refused(agent, observed):
    response = agent.post(MEMORIES, body(field="", fact_key="collections.account-17"))
    refused(response, 422, "memory_kind_mismatch")


def test_a_fact_class_needs_a_fact_key(agent, observed):
    refused(agent.post(MEMORIES, body(memory_class="operational")), 422, "memory_kind_mismatch")


def test_a_direct_memory_is_current_without_a_promotion(agent, observed):
    response = agent.post(MEMORIES, body())
    assert response.status_code == 201, response.content
    assert (response.json()["status"], response.json()["promotion_escalation_id"]) == (
        "current",
        None,
    )
    record = MemoryRecord.objects.get()
    assert list(MemoryStatusEvent.objects.filter(memory=record).values_list("status", "cause")) == [
        ("current", "admitted")
    ]


# --- Preferences need consent -----------------------------------------------------------------


def test_a_preference_without_consent_is_refused(agent, observed):
    response = agent.post(
        MEMORIES, body(memory_class="customer-preferences", field="contact_channel", value="sms")
    )
    refused(response, 422, "consent_missing")


def test_consent_for_another_subject_does_not_count(agent, consent):
    response = agent.post(MEMORIES, {**preference(consent, "sms"), "subject": "account-18"})
    refused(response, 422, "consent_missing")


def test_an_observation_is_not_consent(agent, observed):
    response = agent.post(MEMORIES, preference("ev-seen", "sms"))
    refused(response, 422, "consent_missing")


def test_a_preference_with_a_consent_entry_is_admitted(agent, consent):
    response = agent.post(MEMORIES, preference(consent, "sms"))
    assert response.status_code == 201, response.content
    assert response.json()["status"] == "current"
    assert response.json()["derived_from"] == [consent]


# --- Expiry from the class --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("memory_class", "days"),
    [("episodic", 30), ("case-notes", 90)],
)
def test_an_episode_without_valid_until_gets_its_class_ttl(agent, observed, memory_class, days):
    response = agent.post(MEMORIES, body(memory_class=memory_class))
    assert response.status_code == 201, response.content
    assert response.json()["valid_until"] == (fact_today() + timedelta(days=days)).isoformat()


def test_a_preference_without_valid_until_gets_its_class_ttl(agent, consent):
    response = agent.post(MEMORIES, preference(consent, "sms"))
    assert response.json()["valid_until"] == (fact_today() + timedelta(days=365)).isoformat()


def test_an_explicit_valid_until_is_kept(agent, observed):
    response = agent.post(MEMORIES, body(valid_until="2031-01-31"))
    assert response.json()["valid_until"] == "2031-01-31"


def test_a_fact_gets_no_ttl(agent, observed):
    response = agent.post(
        MEMORIES,
        body(
            memory_class="operational",
            field="",
            fact_key="collections.account-17",
            owner="servicing-team",
            source_revision="case-service@42",
        ),
    )
    assert response.status_code == 201, response.content
    assert response.json()["valid_until"] is None


@pytest.mark.parametrize("memory_class", ["runbooks", "house-rules"])
def test_procedures_and_policy_get_no_ttl(agent, observed, memory_class):
    response = agent.post(MEMORIES, body(memory_class=memory_class, value="never call at night"))
    assert response.status_code == 201, response.content
    assert response.json()["valid_until"] is None


# --- A newer preference supersedes ------------------------------------------------------------


def test_a_newer_preference_for_the_same_subject_and_field_supersedes(agent, consent):
    older = agent.post(MEMORIES, preference(consent, "email")).json()
    newer = agent.post(MEMORIES, preference(consent, "sms")).json()

    assert (newer["status"], newer["supersedes"]) == ("current", older["memory_id"])
    assert agent.get(f"{MEMORIES}/{older['memory_id']}").json()["status"] == "superseded"
    event = MemoryStatusEvent.objects.filter(memory__memory_id=older["memory_id"]).last()
    assert event is not None
    assert (event.status, event.cause) == ("superseded", f"superseded by {newer['memory_id']}")


def test_another_agents_preference_retires_nothing_of_this_agents(agent, consent, now):
    from tests.conftest import make_agent

    mine = agent.post(MEMORIES, preference(consent, "email")).json()
    twin = make_agent("twin-agent", ["attest:case-ledger"])
    twin_consent = twin.post(
        EVIDENCE,
        {
            "kind": "consent",
            "subject": ACCOUNT,
            "field": "contact_channel",
            "value": "agreed, told to the twin",
            "source": "case-ledger",
            "observed_at": (now - timedelta(minutes=1)).isoformat(),
        },
    ).json()["evidence_id"]

    theirs = twin.post(MEMORIES, preference(twin_consent, "sms")).json()

    assert (theirs["status"], theirs["supersedes"]) == ("current", None)  # names nothing
    assert agent.get(f"{MEMORIES}/{mine['memory_id']}").json()["status"] == "current"


def test_preferences_about_other_fields_or_subjects_do_not_supersede(agent, consent, now):
    channel = agent.post(MEMORIES, preference(consent, "email")).json()
    hours = agent.post(
        MEMORIES, {**preference(consent, "mornings"), "field": "contact_hours"}
    ).json()
    other_consent = EvidenceFactory(
        kind="consent", subject="account-18", field="contact_channel", value="agreed"
    )
    other = agent.post(
        MEMORIES,
        {**preference(other_consent.evidence_id, "post"), "subject": "account-18"},
    ).json()
    for memory in (channel, hours, other):
        assert memory["supersedes"] is None
        assert agent.get(f"{MEMORIES}/{memory['memory_id']}").json()["status"] == "current"


def test_episodes_about_the_same_field_do_not_supersede_each_other(agent, observed):
    first = agent.post(MEMORIES, body(value="hold")).json()
    second = agent.post(MEMORIES, body(value="collect")).json()
    assert second["supersedes"] is None
    assert agent.get(f"{MEMORIES}/{first['memory_id']}").json()["status"] == "current"
