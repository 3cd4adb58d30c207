"""Memory admission over HTTP: derivation required, supersession atomic, every field shown."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reconcile_app.models import MemoryRecord
from tests.factories import ACCOUNT, EvidenceFactory, MemoryFactory

MEMORIES = "/api/v1/memories"
FIELDS = {
    "memory_id",
    "agent",
    "memory_class",
    "subject",
    "purpose",
    "field",
    "fact_key",
    "value",
    "note",
    "derived_from",
    "owner",
    "source_revision",
    "valid_until",
    "supersedes",
    "status",
    "written_at",
    "recorded_at",
}


@pytest.fixture
def ledger(db):
    EvidenceFactory(evidence_id="ev-001", value="collect")
    EvidenceFactory(evidence_id="ev-002", value="hold")


def memory(**extra):
    body = {
        "memory_class": "episodic",
        "subject": ACCOUNT,
        "purpose": "collections",
        "field": "collections_status",
        "value": "hold",
        "derived_from": ["ev-002"],
    }
    body.update(extra)
    return body


def test_admitted_memory_shows_every_field_and_is_current(ledger, agent, now):
    response = agent.post(
        MEMORIES,
        memory(
            note="Hardship approval suppresses collections.",
            valid_until="2099-12-31",
            owner="servicing-team",
            source_revision="case-service@42",
            written_at=(now - timedelta(minutes=10)).isoformat(),
        ),
    )

    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) >= FIELDS
    assert body["memory_id"]
    assert body["status"] == "current"
    assert body["agent"] == agent.principal.name
    assert (body["memory_class"], body["subject"], body["purpose"]) == (
        "episodic",
        ACCOUNT,
        "collections",
    )
    assert (body["field"], body["value"]) == ("collections_status", "hold")
    assert body["derived_from"] == ["ev-002"]
    assert body["valid_until"] == "2099-12-31"
    assert (body["owner"], body["source_revision"]) == ("servicing-team", "case-service@42")
    assert body["supersedes"] is None
    stored = MemoryRecord.objects.get(memory_id=body["memory_id"])
    assert stored.valid_until == date(2099, 12, 31)
    # The one record's answer adds what became of its grounds since: nothing yet.
    assert agent.get(f"{MEMORIES}/{body['memory_id']}").json() == {**body, "grounds_corrected": []}


def test_a_generated_memory_id_that_clashes_is_drawn_again(ledger, agent, monkeypatch):
    assert agent.post(MEMORIES, memory(memory_id="mem-000000000001")).status_code == 201
    draws = iter(["000000000001", "000000000002"])
    monkeypatch.setattr("reconcile_app.services.fresh_ids.token_hex", lambda n: next(draws))
    response = agent.post(MEMORIES, memory())
    assert response.status_code == 201, response.content
    assert response.json()["memory_id"] == "mem-000000000002"
    assert next(draws, None) is None


@pytest.mark.parametrize("derived_from", [[], None])
def test_memory_without_derivation_is_refused(ledger, agent, derived_from):
    body = memory(derived_from=derived_from)
    if derived_from is None:
        del body["derived_from"]
    response = agent.post(MEMORIES, body)
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "derivation_missing"
    assert not MemoryRecord.objects.exists()


def test_memory_derived_from_an_unknown_reference_is_refused(ledger, agent):
    response = agent.post(MEMORIES, memory(derived_from=["ev-002", "ev-invented"]))
    assert response.status_code == 400
    assert response.json()["code"] == "unknown_reference"
    assert response.json()["missing"] == ["ev-invented"]
    assert not MemoryRecord.objects.exists()


def test_memory_may_derive_from_another_memory(ledger, agent):
    first = agent.post(MEMORIES, memory()).json()["memory_id"]
    response = agent.post(
        MEMORIES, memory(memory_class="case-notes", derived_from=[f"memory:{first}"])
    )
    assert response.status_code == 201, response.content
    assert response.json()["derived_from"] == [f"memory:{first}"]


def test_superseding_marks_the_old_record_superseded(ledger, agent):
    old = agent.post(MEMORIES, memory(value="collect", derived_from=["ev-001"])).json()

    response = agent.post(MEMORIES, memory(supersedes=old["memory_id"]))

    assert response.status_code == 201, response.content
    assert response.json()["supersedes"] == old["memory_id"]
    assert response.json()["status"] == "current"
    assert agent.get(f"{MEMORIES}/{old['memory_id']}").json()["status"] == "superseded"


def test_superseding_a_record_that_is_not_current_conflicts(ledger, agent):
    old = agent.post(MEMORIES, memory(value="collect", derived_from=["ev-001"])).json()
    assert agent.post(MEMORIES, memory(supersedes=old["memory_id"])).status_code == 201

    response = agent.post(MEMORIES, memory(supersedes=old["memory_id"]))

    assert response.status_code == 409
    assert response["Content-Type"] == "application/problem+json"
    assert MemoryRecord.objects.count() == 2


def test_failed_supersession_leaves_the_old_record_current(ledger, agent):
    old = agent.post(MEMORIES, memory(value="collect", derived_from=["ev-001"])).json()
    taken = agent.post(MEMORIES, memory(memory_id="mem-taken")).json()["memory_id"]

    # The insert fails after the flip: the flip must roll back with it.
    response = agent.post(MEMORIES, memory(supersedes=old["memory_id"], memory_id=taken))

    assert response.status_code == 409
    assert MemoryRecord.objects.get(memory_id=old["memory_id"]).status == "current"


def test_superseding_an_unknown_record_is_an_unknown_reference(ledger, agent):
    response = agent.post(MEMORIES, memory(supersedes="mem-ghost"))
    assert response.status_code == 400
    assert response.json()["code"] == "unknown_reference"


def test_memory_needs_a_field_or_a_fact_key(ledger, agent):
    response = agent.post(MEMORIES, memory(field=""))
    assert response.status_code == 400
    assert response.json()["code"] == "target_missing"


def test_auditor_cannot_write_memories(ledger, auditor):
    response = auditor.post(MEMORIES, memory())
    assert response.status_code == 403
    assert not MemoryRecord.objects.exists()


def test_list_filters_by_subject_fact_key_class_and_status(ledger, agent):
    principal = agent.principal
    old = MemoryFactory(agent=principal, derived_from=["ev-001"], memory_id="m-old")
    MemoryFactory(
        agent=principal,
        derived_from=["ev-002"],
        value="hold",
        supersedes="m-old",
        memory_id="m-new",
    )
    MemoryFactory(
        agent=principal,
        derived_from=["ev-002"],
        subject="account-18",
        memory_class="case-notes",
        memory_id="m-18",
    )
    MemoryFactory(
        agent=principal,
        derived_from=["ev-002"],
        field="",
        fact_key="baseline.math",
        memory_class="operational",
        memory_id="m-fact",
    )
    assert old.memory_id == "m-old"

    def ids(**params):
        response = agent.get(MEMORIES, **params)
        assert response.status_code == 200, response.content
        return sorted(item["memory_id"] for item in response.json()["results"])

    assert ids() == ["m-18", "m-fact", "m-new", "m-old"]
    assert ids(subject="account-18") == ["m-18"]
    assert ids(fact_key="baseline.math") == ["m-fact"]
    assert ids(memory_class="case-notes") == ["m-18"]
    assert ids(status="superseded") == ["m-old"]
    assert ids(status="current") == ["m-18", "m-fact", "m-new"]
    assert ids(subject=ACCOUNT, status="current") == ["m-fact", "m-new"]


def test_memory_list_query_count_does_not_grow_with_rows(ledger, agent):
    def count_queries() -> int:
        agent.client.get(MEMORIES)
        with CaptureQueriesContext(connection) as queries:
            assert agent.client.get(MEMORIES).status_code == 200
        return len(queries)

    previous = agent.post(MEMORIES, memory()).json()["memory_id"]
    few = count_queries()
    for _ in range(5):
        previous = agent.post(MEMORIES, memory(supersedes=previous)).json()["memory_id"]
    assert MemoryRecord.objects.count() == 6
    assert count_queries() == few
