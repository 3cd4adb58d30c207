"""GET /api/v1/memory-classes: every principal reads the declared classes and their rules;
the counts of memories are scoped to who asks (docs/api.md "Who reads what")."""

from __future__ import annotations

import pytest

from reconcile_app.services.quarantine import quarantine_apply, quarantine_create
from tests.conftest import make_agent
from tests.factories import EvidenceFactory, MemoryFactory

CLASSES = "/api/v1/memory-classes"
DEMO_CLASSES = [
    "case-notes",
    "customer-preferences",
    "episodic",
    "house-rules",
    "operational",
    "runbooks",
]
STATUSES = {
    "current",
    "suggested",
    "active",
    "rejected",
    "superseded",
    "expired",
    "historical_only",
}


@pytest.fixture
def evidence(db):
    return EvidenceFactory(evidence_id="ev-class-1")


def names(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [item["name"] for item in response.json()["results"]]


def test_every_declared_class_is_listed_with_its_rules(agent):
    response = agent.get(CLASSES)
    assert names(response) == DEMO_CLASSES
    by_name = {item["name"]: item for item in response.json()["results"]}
    episodic = by_name["episodic"]
    assert (episodic["kind"], episodic["owner"], episodic["default_ttl_days"]) == (
        "episodic",
        "platform-operations",
        30,
    )
    assert episodic["admission"] == "direct"
    assert episodic["description"].startswith("What an agent saw happen")
    assert episodic["expires_by_date"] is True
    rules = by_name["house-rules"]
    assert (rules["kind"], rules["admission"], rules["default_ttl_days"]) == (
        "policy",
        "review",
        None,
    )
    assert rules["expires_by_date"] is False
    assert "only by review" in rules["retirement"]
    assert "supersedes" in by_name["customer-preferences"]["retirement"]
    assert set(episodic["counts"]) == STATUSES
    assert episodic["quarantined"] is False


def test_one_class_by_name(agent):
    response = agent.get(f"{CLASSES}/runbooks")
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["name"], body["kind"], body["admission"]) == ("runbooks", "procedural", "review")
    assert body["total"] == 0


def test_an_undeclared_class_is_not_found(agent):
    response = agent.get(f"{CLASSES}/nonsense")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "memory_class_not_found"


def test_a_class_name_that_is_no_identifier_is_refused(agent):
    response = agent.get(f"{CLASSES}/..")
    assert response.status_code in (400, 404)
    assert response.status_code != 500


def test_counts_are_those_of_the_memories_the_caller_may_read(agent, operator, evidence):
    rival = make_agent("rival-agent", [])
    for _ in range(2):
        MemoryFactory(agent=agent.principal, derived_from=[evidence.evidence_id])
    MemoryFactory(agent=rival.principal, derived_from=[evidence.evidence_id])
    MemoryFactory(
        agent=agent.principal,
        memory_class="runbooks",
        value="retry after a fresh read",
        derived_from=[evidence.evidence_id],
    )

    mine = agent.get(f"{CLASSES}/episodic").json()
    assert (mine["counts"]["current"], mine["total"]) == (2, 2)
    theirs = rival.get(f"{CLASSES}/episodic").json()
    assert (theirs["counts"]["current"], theirs["total"]) == (1, 1)
    everyone = operator.get(f"{CLASSES}/episodic").json()
    assert (everyone["counts"]["current"], everyone["total"]) == (3, 3)
    runbooks = agent.get(f"{CLASSES}/runbooks").json()["counts"]
    assert (runbooks["suggested"], runbooks["active"], runbooks["current"]) == (1, 0, 0)
    listed = {item["name"]: item for item in agent.get(CLASSES).json()["results"]}
    assert listed["episodic"]["counts"] == mine["counts"]


def test_a_quarantined_class_says_so(agent, operator):
    quarantine = quarantine_create(
        scope="memory_class", target="case-notes", reason="poisoned notes", actor=operator.user
    )
    quarantine_apply(quarantine_id=quarantine.quarantine_id)
    listed = {item["name"]: item["quarantined"] for item in agent.get(CLASSES).json()["results"]}
    assert listed == {name: name == "case-notes" for name in DEMO_CLASSES}


def test_the_list_filters_by_kind_and_admission(agent):
    assert names(agent.get(CLASSES, kind="episodic")) == ["case-notes", "episodic"]
    assert names(agent.get(CLASSES, admission="review")) == ["house-rules", "runbooks"]
    assert names(agent.get(CLASSES, owner="servicing-team")) == [
        "case-notes",
        "customer-preferences",
    ]


def test_anonymous_callers_are_refused(client, db):
    assert client.get(CLASSES).status_code == 401


# The key, the page's count and rows, the caller's roles (to scope the counts), the counts
# in one aggregate, the active quarantines: six, however many classes or memories.
LIST_QUERIES = 6


def test_list_query_count_does_not_grow_with_memories(
    agent, operator, evidence, django_assert_num_queries
):
    for persona in (agent, operator):
        with django_assert_num_queries(LIST_QUERIES):
            assert persona.client.get(CLASSES).status_code == 200
    for index in range(9):
        MemoryFactory(
            agent=agent.principal,
            memory_class=["episodic", "case-notes", "runbooks"][index % 3],
            derived_from=[evidence.evidence_id],
        )
    for persona in (agent, operator):
        with django_assert_num_queries(LIST_QUERIES):
            response = persona.client.get(CLASSES)
        assert sum(item["total"] for item in response.json()["results"]) == 9
