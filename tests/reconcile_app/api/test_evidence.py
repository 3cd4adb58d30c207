"""The evidence ledger over HTTP: append-only, hash-chained, filtered reads."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from reconcile_app.canonical import content_hash
from reconcile_app.errors import ValidationFailed
from reconcile_app.models import EvidenceEntry, LedgerHead
from reconcile_app.services.evidence import (
    _inserted_onto_head,
    entry_hash_content,
    evidence_append,
)
from reconcile_app.services.ledger_check import ledger_verify
from tests.factories import ACCOUNT, EvidenceFactory, reconcile_body, seed_collectible

EVIDENCE = "/api/v1/evidence"


def observation(now, **extra):
    body = {
        "kind": "observation",
        "subject": ACCOUNT,
        "field": "collections_status",
        "value": "hold",
        "source": "case-ledger",
        "observed_at": (now - timedelta(minutes=20)).isoformat(),
    }
    body.update(extra)
    return body


def test_append_returns_id_recorded_time_and_hash(db, agent, now):
    response = agent.post(EVIDENCE, observation(now))

    assert response.status_code == 201, response.content
    body = response.json()
    entry = EvidenceEntry.objects.get(evidence_id=body["evidence_id"])
    assert body["hash"] == entry.hash == content_hash(entry_hash_content(entry))
    assert len(body["hash"]) == 64
    assert body["recorded_at"].endswith("Z")
    assert body["recorded_by"] == agent.principal.name
    assert (body["value"], body["kind"], body["seq"]) == ("hold", "observation", 1)
    assert body["prev_hash"] == "0" * 64


def test_entries_chain_onto_their_predecessor(db, agent, operator, now):
    first = agent.post(EVIDENCE, observation(now)).json()
    second = operator.post(EVIDENCE, observation(now, value="collect")).json()

    assert second["prev_hash"] == first["hash"]
    assert second["seq"] == first["seq"] + 1


def test_caller_chosen_evidence_id_is_kept_and_unique(db, agent, now):
    assert agent.post(EVIDENCE, observation(now, evidence_id="ev-001")).status_code == 201
    response = agent.post(EVIDENCE, observation(now, evidence_id="ev-001"))
    assert response.status_code == 409
    assert response.json()["code"] == "evidence_id_taken"
    assert EvidenceEntry.objects.count() == 1


def test_a_generated_evidence_id_that_clashes_is_drawn_again(db, agent, now, monkeypatch):
    assert agent.post(EVIDENCE, observation(now, evidence_id="ev-000000000001")).status_code == 201
    draws = iter(["000000000001", "000000000002"])
    monkeypatch.setattr("reconcile_app.services.fresh_ids.token_hex", lambda n: next(draws))
    response = agent.post(EVIDENCE, observation(now))
    assert response.status_code == 201, response.content
    assert response.json()["evidence_id"] == "ev-000000000002"
    assert next(draws, None) is None
    # The id is in the hash: the entry chained on is the one made with the second draw.
    assert response.json()["seq"] == 2
    assert ledger_verify().problems == []


def test_after_a_refused_id_the_next_entry_chains_onto_the_last(db, agent, now):
    first = agent.post(EVIDENCE, observation(now, evidence_id="ev-held")).json()
    assert agent.post(EVIDENCE, observation(now, evidence_id="ev-held")).status_code == 409

    following = agent.post(EVIDENCE, observation(now)).json()
    assert (following["seq"], following["prev_hash"]) == (first["seq"] + 1, first["hash"])
    assert ledger_verify().problems == []


def test_an_entry_under_a_held_id_writes_nothing_and_leaves_the_head(db, agent, now):
    """PostgreSQL's one statement moves the head only when the entry went in."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite asks whether the id is held before it writes")
    held = agent.post(EVIDENCE, observation(now, evidence_id="ev-held")).json()
    with transaction.atomic():
        head = LedgerHead.objects.select_for_update().get(pk=1)
        entry = EvidenceEntry(
            seq=head.seq + 1,
            evidence_id="ev-held",
            kind="observation",
            subject=ACCOUNT,
            field="collections_status",
            value="collect",
            source="case-ledger",
            observed_at=now,
            recorded_at=timezone.now(),
            derived_from=[],
            prev_hash=head.hash,
        )
        entry.hash = content_hash(entry_hash_content(entry))

        assert _inserted_onto_head(entry, head) is False

    head.refresh_from_db()
    assert (head.seq, head.hash) == (held["seq"], held["hash"])
    assert EvidenceEntry.objects.count() == 1


def test_list_filters_by_subject_field_and_recorded_before(db, auditor, now):
    EvidenceFactory(evidence_id="ev-a")
    EvidenceFactory(evidence_id="ev-b", field="complaint_status", value="open")
    EvidenceFactory(evidence_id="ev-c", subject="account-18")
    cutoff = timezone.now()
    time.sleep(0.01)
    EvidenceFactory(evidence_id="ev-d")

    def ids(**params):
        response = auditor.get(EVIDENCE, **params)
        assert response.status_code == 200, response.content
        return [item["evidence_id"] for item in response.json()["results"]]

    assert sorted(ids()) == ["ev-a", "ev-b", "ev-c", "ev-d"]
    assert sorted(ids(subject=ACCOUNT)) == ["ev-a", "ev-b", "ev-d"]
    assert sorted(ids(subject=ACCOUNT, field="collections_status")) == ["ev-a", "ev-d"]
    assert sorted(ids(recorded_before=cutoff.isoformat().replace("+00:00", "Z"))) == [
        "ev-a",
        "ev-b",
        "ev-c",
    ]
    assert sorted(ids(subject=ACCOUNT, recorded_before=cutoff.isoformat())) == ["ev-a", "ev-b"]


def test_detail_shows_the_entry(db, agent, now):
    agent.post(EVIDENCE, observation(now, evidence_id="ev-001"))
    response = agent.get(f"{EVIDENCE}/ev-001")
    assert response.status_code == 200
    assert response.json()["evidence_id"] == "ev-001"
    assert agent.get(f"{EVIDENCE}/ev-none").status_code == 404


@pytest.mark.parametrize("method", ["put", "patch", "delete"])
def test_entries_cannot_be_updated_or_deleted(db, agent, operator, now, method):
    entry = EvidenceFactory(evidence_id="ev-001")
    for persona in (agent, operator):
        response = getattr(persona.client, method)(
            f"{EVIDENCE}/ev-001", {"value": "collect"}, format="json"
        )
        assert response.status_code == 405
        assert response["Content-Type"] == "application/problem+json"
        assert response.json()["code"] == "method_not_allowed"
    stored = EvidenceEntry.objects.get(evidence_id="ev-001")
    assert (stored.value, stored.hash) == ("hold", entry.hash)


def test_unknown_supersession_target_is_refused(db, agent, now):
    response = agent.post(EVIDENCE, observation(now, supersedes="ev-missing"))
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "unknown_reference"
    assert response.json()["missing"] == ["ev-missing"]
    assert not EvidenceEntry.objects.exists()


def test_unknown_derivation_is_refused(db, agent, now):
    EvidenceFactory(evidence_id="ev-001")
    response = agent.post(EVIDENCE, observation(now, derived_from=["ev-001", "ev-ghost"]))
    assert response.status_code == 400
    assert response.json()["code"] == "unknown_reference"
    assert response.json()["missing"] == ["ev-ghost"]
    assert EvidenceEntry.objects.count() == 1


# The ledger's own revocations (what POST /api/v1/corrections writes) ---------------------------


def revocation(revokes: str):
    return evidence_append(
        kind="correction",
        subject=ACCOUNT,
        source="operator:olivia",
        observed_at=timezone.now(),
        revokes=revokes,
    )


def test_revocation_points_at_the_revoked_entry(db):
    EvidenceFactory(evidence_id="ev-002")
    entry = revocation("ev-002")
    assert entry.revokes.evidence_id == "ev-002"
    # The revoked entry itself is untouched: corrections are new rows.
    assert EvidenceEntry.objects.get(evidence_id="ev-002").value == "hold"


def test_prefixed_revokes_reference_withdraws_that_entry(db):
    """`revokes: "evidence:ev-002"` passes the reference check, so it must not be dropped."""
    EvidenceFactory(evidence_id="ev-002")
    assert revocation("evidence:ev-002").revokes.evidence_id == "ev-002"


def test_revokes_naming_a_snapshot_is_refused(estate, agent, now):
    """Only ledger entries can be revoked; a snapshot id is not silently accepted."""
    seed_collectible(now)
    snapshot_id = agent.post("/api/v1/reconcile", reconcile_body()).json()["snapshot_id"]
    before = EvidenceEntry.objects.count()

    with pytest.raises(ValidationFailed) as refused:
        revocation(snapshot_id)

    assert refused.value.code == "unknown_reference"
    assert EvidenceEntry.objects.count() == before


def test_auditor_cannot_append_but_can_read(db, auditor, now):
    EvidenceFactory(evidence_id="ev-001")
    response = auditor.post(EVIDENCE, observation(now))
    assert response.status_code == 403
    assert response["Content-Type"] == "application/problem+json"
    assert EvidenceEntry.objects.count() == 1
    assert auditor.get(EVIDENCE).status_code == 200


def test_unknown_kind_is_refused(db, agent, now):
    response = agent.post(EVIDENCE, observation(now, kind="rumour"))
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"


@pytest.mark.parametrize("persona_name", ["agent", "auditor"])
def test_evidence_list_query_count_does_not_grow_with_rows(db, request, now, persona_name):
    persona = request.getfixturevalue(persona_name)
    writer = request.getfixturevalue("agent")
    writer.post(EVIDENCE, observation(now, evidence_id="ev-001"))

    def count_queries() -> int:
        persona.client.get(EVIDENCE)
        with CaptureQueriesContext(connection) as queries:
            response = persona.client.get(EVIDENCE)
            assert response.status_code == 200
        return len(queries)

    few = count_queries()
    for index in range(5):
        writer.post(
            EVIDENCE,
            observation(now, supersedes="ev-001" if index == 0 else None, derived_from=["ev-001"]),
        )
    assert EvidenceEntry.objects.count() == 6
    assert persona.client.get(EVIDENCE).json()["count"] == 6
    assert count_queries() == few
