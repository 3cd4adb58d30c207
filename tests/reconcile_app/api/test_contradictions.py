"""Contradictions are preserved as rows (both values, both sources) and resolved by operators."""

from __future__ import annotations

from datetime import timedelta

from django.db import connection
from django.test.utils import CaptureQueriesContext

from reconcile_app.models import AuditEvent, Contradiction
from tests.factories import (
    ACCOUNT,
    EvidenceFactory,
    SandboxRecordFactory,
    reconcile_body,
    seed_collectible,
)

RECONCILE = "/api/v1/reconcile"
CONTRADICTIONS = "/api/v1/contradictions"


def later_hold_evidence(now):
    """The ledger saw "hold" five minutes ago; the case service still says "collect"."""
    EvidenceFactory(
        value="hold",
        observed_at=now - timedelta(minutes=5),
        source="hardship-desk",
        evidence_id="ev-late-hold",
    )


def test_later_disagreeing_evidence_escalates_under_the_collections_contract(estate, agent, now):
    seed_collectible(now)
    later_hold_evidence(now)

    body = agent.post(RECONCILE, reconcile_body()).json()

    assert body["decision"]["result"] == "escalate"
    assert [r["code"] for r in body["decision"]["reasons"]] == ["contradiction"]
    assert body["decision"]["permitted_actions"] == []
    [row] = body["contradictions"]
    assert row["kind"] == "evidence_vs_state"
    assert (row["subject"], row["field"]) == (ACCOUNT, "collections_status")
    assert row["state"] == {"value": "collect", "source": "case-service", "ref": "case-service@7"}
    assert row["other"] == {"value": "hold", "source": "hardship-desk", "ref": "ev-late-hold"}
    assert row["status"] == "open"
    stored = Contradiction.objects.get(pk=row["id"])
    assert (stored.state_value, stored.other_value) == ("collect", "hold")
    assert stored.snapshot.snapshot_id == body["snapshot_id"]


def test_later_disagreeing_evidence_refuses_under_the_warehouse_contract(estate, agent, now):
    SandboxRecordFactory(
        source="warehouse-service",
        subject="pallet-P17",
        field="pallet_bay",
        value="bay-4",
        version=318,
        valid_from=now - timedelta(hours=1),
    )
    EvidenceFactory(
        subject="pallet-P17",
        field="pallet_bay",
        value="bay-4",
        source="warehouse-ledger",
        observed_at=now - timedelta(hours=1),
    )
    EvidenceFactory(
        subject="pallet-P17",
        field="pallet_bay",
        value="bay-9",
        source="floor-scanner",
        observed_at=now - timedelta(minutes=1),
        evidence_id="ev-moved",
    )

    response = agent.post(
        RECONCILE,
        reconcile_body(
            subject="pallet-P17",
            action="pick_pallet",
            purpose="fulfilment",
            decision_class="warehouse-pick",
        ),
    )

    body = response.json()
    assert body["decision"]["result"] == "refuse"
    assert [r["code"] for r in body["decision"]["reasons"]] == ["contradiction"]
    [row] = body["contradictions"]
    assert row["state"]["value"] == "bay-4"
    assert row["other"] == {"value": "bay-9", "source": "floor-scanner", "ref": "ev-moved"}


def test_evidence_older_than_the_states_valid_time_is_not_a_contradiction(estate, agent, now):
    seed_collectible(now)
    EvidenceFactory(value="hold", observed_at=now - timedelta(hours=2))

    body = agent.post(RECONCILE, reconcile_body()).json()

    assert body["contradictions"] == []
    assert body["decision"]["result"] == "allow"


def test_memory_vs_state_contradiction_is_stored_without_changing_the_decision(estate, agent, now):
    seed_collectible(now)
    body = agent.post(
        RECONCILE,
        reconcile_body(
            claims=[
                {
                    "subject": ACCOUNT,
                    "field": "collections_status",
                    "value": "hold",
                    "written_at": now.isoformat(),
                    "memory_class": "case-notes",
                }
            ]
        ),
    ).json()

    assert body["decision"]["result"] == "allow"
    [row] = Contradiction.objects.filter(snapshot__snapshot_id=body["snapshot_id"])
    assert row.kind == "memory_vs_state"
    assert (row.state_value, row.other_value) == ("collect", "hold")
    assert row.other_source == "memory:case-notes"


def test_open_contradictions_are_listed_for_people(estate, agent, operator, auditor, now):
    seed_collectible(now)
    later_hold_evidence(now)
    snapshot_id = agent.post(RECONCILE, reconcile_body()).json()["snapshot_id"]

    for persona in (operator, auditor):
        response = persona.get(CONTRADICTIONS, status="open")
        assert response.status_code == 200
        [row] = response.json()["results"]
        assert row["snapshot_id"] == snapshot_id
        assert row["status"] == "open"
    assert operator.get(CONTRADICTIONS, status="resolved").json()["results"] == []


def test_agents_cannot_list_contradictions(estate, agent):
    response = agent.get(CONTRADICTIONS)
    assert response.status_code == 403
    assert response["Content-Type"] == "application/problem+json"


def test_operator_resolves_a_contradiction_with_an_audit_event(estate, agent, operator, now):
    seed_collectible(now)
    later_hold_evidence(now)
    row_id = agent.post(RECONCILE, reconcile_body()).json()["contradictions"][0]["id"]

    response = operator.post(
        f"{CONTRADICTIONS}/{row_id}/resolve",
        {"note": "hardship desk entry was for another account"},
    )

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "resolved"
    assert body["resolved_by"] == operator.user.username
    assert body["resolution_note"] == "hardship desk entry was for another account"
    # Both values are kept as they were.
    assert (body["state"]["value"], body["other"]["value"]) == ("collect", "hold")
    event = AuditEvent.objects.get(action="contradiction.resolve", object_ref=str(row_id))
    assert event.actor == operator.user
    assert event.reason == "hardship desk entry was for another account"
    assert event.before == {"status": "open"} and event.after == {"status": "resolved"}
    assert operator.get(CONTRADICTIONS, status="open").json()["results"] == []


def test_auditor_cannot_resolve(estate, agent, auditor, now):
    seed_collectible(now)
    later_hold_evidence(now)
    row_id = agent.post(RECONCILE, reconcile_body()).json()["contradictions"][0]["id"]

    response = auditor.post(f"{CONTRADICTIONS}/{row_id}/resolve", {"note": "looks fine"})

    assert response.status_code == 403
    assert Contradiction.objects.get(pk=row_id).status == "open"
    assert not AuditEvent.objects.exclude(
        object_kind__in=["user", "principal", "contract", "source", "memory_class"]
    ).exists()


def test_resolving_twice_conflicts(estate, agent, operator, now):
    seed_collectible(now)
    later_hold_evidence(now)
    row_id = agent.post(RECONCILE, reconcile_body()).json()["contradictions"][0]["id"]
    assert operator.post(f"{CONTRADICTIONS}/{row_id}/resolve", {"note": "first"}).status_code == 200

    response = operator.post(f"{CONTRADICTIONS}/{row_id}/resolve", {"note": "second"})

    assert response.status_code == 409
    assert response.json()["code"] == "already_resolved"
    assert Contradiction.objects.get(pk=row_id).resolution_note == "first"
    assert AuditEvent.objects.filter(action="contradiction.resolve").count() == 1


def test_resolving_needs_a_note_and_an_existing_row(estate, operator):
    assert operator.post(f"{CONTRADICTIONS}/999/resolve", {"note": "x"}).status_code == 404
    response = operator.post(f"{CONTRADICTIONS}/999/resolve", {})
    assert response.status_code == 400


def test_contradiction_list_query_count_does_not_grow_with_rows(estate, agent, operator, now):
    seed_collectible(now)
    later_hold_evidence(now)

    def count_queries() -> int:
        operator.client.get(CONTRADICTIONS)  # warm role caches and sessions
        with CaptureQueriesContext(connection) as queries:
            response = operator.client.get(CONTRADICTIONS)
        assert response.status_code == 200
        return len(queries)

    agent.post(RECONCILE, reconcile_body())
    few = count_queries()
    for _ in range(4):
        # Resolved rows stay; the same disagreement seen again then opens a new one.
        operator.post(f"{CONTRADICTIONS}/{Contradiction.objects.first().pk}/resolve", {"note": "n"})
        agent.post(RECONCILE, reconcile_body())
    assert Contradiction.objects.count() == 5
    assert count_queries() == few


def test_a_retry_seeing_the_same_disagreement_joins_the_open_row(estate, agent, operator, now):
    seed_collectible(now)
    later_hold_evidence(now)
    first = agent.post(RECONCILE, reconcile_body()).json()
    retries = [agent.post(RECONCILE, reconcile_body()).json() for _ in range(3)]

    [row] = Contradiction.objects.all()
    assert row.snapshot.snapshot_id == first["snapshot_id"]

    # A retry is answered from the row it joined, values decoded as the first answer's were
    # (each answer names its own snapshot; the row was seen again later).
    def as_first_saw(shown: list[dict]) -> list[dict]:
        return [{**item, "snapshot_id": None, "last_seen_at": None} for item in shown]

    assert [as_first_saw(retry["contradictions"]) for retry in retries] == [
        as_first_saw(first["contradictions"])
    ] * 3
    assert (
        retries[-1]["contradictions"][0]["last_seen_at"]
        > first["contradictions"][0]["last_seen_at"]
    )
    assert sorted(row.seen_in.values_list("snapshot_id", flat=True)) == sorted(
        [first["snapshot_id"], *(retry["snapshot_id"] for retry in retries)]
    )
    assert row.last_seen_at > row.detected_at
    # Every snapshot still shows the disagreement it saw, with the row's id and status.
    for body in [first, *retries]:
        [shown] = agent.get(f"/api/v1/snapshots/{body['snapshot_id']}").json()["contradictions"]
        assert (shown["id"], shown["status"]) == (row.pk, "open")
    listed = operator.get(CONTRADICTIONS, status="open").json()["results"]
    assert [item["id"] for item in listed] == [row.pk]
    assert listed[0]["last_seen_at"] > listed[0]["detected_at"]

    operator.post(f"{CONTRADICTIONS}/{row.pk}/resolve", {"note": "checked with the ledger"})
    agent.post(RECONCILE, reconcile_body())
    assert Contradiction.objects.filter(status="open").count() == 1
    assert Contradiction.objects.count() == 2
