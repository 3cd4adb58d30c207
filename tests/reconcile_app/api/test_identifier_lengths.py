"""API.md "Input limits": an identifier (`subject`, `field`, `fact_key`, `source`,
`memory_class`, `Idempotency-Key`) is 1 to 200 characters; else 400 `invalid_identifier`.

A `field` of 151 to 200 characters is a valid identifier: it is taken wherever a field is named
(evidence, memories, claims, the sandbox owner), and stored whole on every database. A
`memory_class` that is a valid identifier but no declared class is 422
`memory_class_unknown`, as for any undeclared class.
"""

from __future__ import annotations

import pytest

from reconcile_app.models import DecisionSnapshot, EvidenceEntry, MemoryRecord
from tests.factories import ACCOUNT, claim, reconcile_body, seed_collectible

LONGEST = "f" * 200
TOO_LONG = "f" * 201


def evidence_body(field: str) -> dict:
    return {
        "kind": "observation",
        "subject": ACCOUNT,
        "field": field,
        "value": "hold",
        "source": "case-ledger",
        "observed_at": "2026-11-01T00:00:00Z",
    }


def memory_body(field: str, memory_class: str = "episodic") -> dict:
    entry = EvidenceEntry.objects.first()
    assert entry is not None  # the estate holds evidence
    return {
        "memory_class": memory_class,
        "subject": ACCOUNT,
        "purpose": "collections",
        "field": field,
        "value": "hold",
        "derived_from": [entry.evidence_id],
    }


def test_evidence_takes_a_field_of_200_characters(estate, operator):
    response = operator.post("/api/v1/evidence", evidence_body(LONGEST))

    assert response.status_code == 201, response.content
    assert EvidenceEntry.objects.get(evidence_id=response.json()["evidence_id"]).field == LONGEST


def test_a_field_of_201_characters_is_invalid_identifier(estate, operator):
    response = operator.post("/api/v1/evidence", evidence_body(TOO_LONG))

    assert response.status_code == 400, response.content
    assert response.json()["code"] == "invalid_identifier"
    assert not EvidenceEntry.objects.exists()


def test_a_memory_takes_a_field_of_200_characters(estate, operator, agent):
    operator.post("/api/v1/evidence", evidence_body("collections_status"))

    response = agent.post("/api/v1/memories", memory_body(LONGEST))

    assert response.status_code == 201, response.content
    assert MemoryRecord.objects.get(memory_id=response.json()["memory_id"]).field == LONGEST


@pytest.mark.parametrize("memory_class", ["product.notes", "m" * 200])
def test_an_undeclared_memory_class_is_memory_class_unknown(estate, operator, agent, memory_class):
    operator.post("/api/v1/evidence", evidence_body("collections_status"))

    response = agent.post("/api/v1/memories", memory_body("notes", memory_class))

    assert response.status_code == 422, response.content
    assert response.json()["code"] == "memory_class_unknown"
    assert not MemoryRecord.objects.exists()


def test_a_claim_names_a_field_of_200_characters(estate, agent, now):
    seed_collectible(now)
    remembered = claim("collect", written_at=now)
    remembered.update(field=LONGEST, memory_class="c" * 200)

    response = agent.post("/api/v1/reconcile", reconcile_body(claims=[remembered]))

    assert response.status_code == 201, response.content
    verdict = response.json()["claims"][0]
    assert (verdict["field"], verdict["memory_class"]) == (LONGEST, "c" * 200)
    assert DecisionSnapshot.objects.count() == 1


def test_the_sandbox_owner_takes_a_field_of_200_characters(estate, operator):
    url = f"/api/v1/sandbox/case-service/records/{ACCOUNT}/{LONGEST}"

    written = operator.client.put(url, {"value": "hold"}, format="json")
    read = operator.client.get(url)

    assert written.status_code == 200, written.content
    assert (read.status_code, read.json()["value"]) == (200, "hold")


def test_a_quarantine_target_of_200_characters_is_looked_up(estate, operator):
    response = operator.post(
        "/api/v1/quarantines", {"scope": "source", "target": "s" * 200, "reason": "outage"}
    )

    assert response.status_code == 400, response.content
    assert response.json()["code"] == "unknown_source"
