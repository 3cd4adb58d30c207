"""The hardship reducer and event-sourced reads, end to end through the sandbox."""

from __future__ import annotations

from datetime import timedelta

import pytest

from reconcile_app.reducers import Event, fold
from reconcile_app.reducers.hardship import HARDSHIP_V3
from sandbox_app.services import sandbox_event_append, sandbox_fault_add, sandbox_record_write
from tests.conftest import ago

LETTER = "collections-letter"


def event(event_id: str, seq: int, kind: str, minutes_ago: int = 60) -> Event:
    moment = ago(minutes=minutes_ago)
    return Event(event_id, seq, kind, "acct", "", None, moment, moment)


def test_approval_opens_revocation_closes_missed_payments_count():
    folded = fold(
        HARDSHIP_V3,
        [
            event("e1", 1, "PaymentMissed"),
            event("e2", 2, "HardshipApproved"),
            event("e3", 3, "PaymentMissed"),
        ],
    )
    assert folded.values == {
        "hardship_active": True,
        "missed_payments": 2,
        "collections_eligible": False,
    }
    assert folded.inputs["collections_eligible"]["missed_payments"] == 2
    revoked = fold(
        HARDSHIP_V3,
        [
            *[event("e1", 1, "PaymentMissed")],
            event("e2", 2, "HardshipApproved"),
            event("e3", 3, "HardshipRevoked"),
        ],
    )
    assert revoked.values["collections_eligible"] is True


def test_duplicates_and_reordering_within_the_ordering_key_give_the_same_state():
    history = [
        event("e1", 1, "HardshipApproved"),
        event("e2", 2, "PaymentMissed"),
        event("e3", 3, "HardshipRevoked"),
    ]
    shuffled = [history[2], history[0], history[1], history[0], history[2]]
    assert fold(HARDSHIP_V3, history).values == fold(HARDSHIP_V3, shuffled).values


def test_events_that_cannot_be_ordered_are_a_conflict_not_last_write_wins():
    folded = fold(
        HARDSHIP_V3, [event("e1", 1, "HardshipApproved"), event("e2", 1, "HardshipRevoked")]
    )
    assert folded.status == "conflict"
    assert "cannot be ordered" in folded.detail


@pytest.fixture
def ledger(estate):
    def append(subject: str, *kinds: str, seq_start: int = 1) -> None:
        if seq_start == 1:  # the letter is written to the correspondence service
            sandbox_record_write(
                source="correspondence-service",
                subject=subject,
                field="letter_status",
                value="none",
                version=7,
            )
        for offset, kind in enumerate(kinds):
            sandbox_event_append(
                source="hardship-ledger",
                event_id=f"{subject}-{seq_start + offset}",
                type=kind,
                subject=subject,
                seq=seq_start + offset,
                valid_from=ago(hours=5 - offset),
            )

    return append


def reconcile(agent, subject: str):
    response = agent.post(
        "/api/v1/reconcile",
        {
            "subject": subject,
            "purpose": "collections",
            "decision_class": LETTER,
            "proposed_action": "send_collections_letter",
        },
    )
    assert response.status_code == 201, response.content
    return response.json()


@pytest.fixture
def letters_agent(db):
    from tests.conftest import make_agent

    return make_agent("letters", [f"{LETTER}:send_collections_letter"])


def test_event_sourced_reconcile_keeps_derived_inputs(ledger, letters_agent):
    ledger("acct-1", "PaymentMissed", "PaymentMissed")
    body = reconcile(letters_agent, "acct-1")
    assert body["decision"]["result"] == "allow"
    assert body["reducer_version"] == "hardship@3"
    eligible = body["fields"]["collections_eligible"]
    assert eligible["value"] is True
    assert eligible["version"] == 2
    assert eligible["inputs"]["missed_payments"] == 2


def test_an_allowed_letter_is_committed_to_its_own_owner_and_not_sent_twice(ledger, letters_agent):
    ledger("acct-9", "PaymentMissed")
    body = reconcile(letters_agent, "acct-9")
    assert body["decision"]["result"] == "allow"
    handle = body["actions"]["send_collections_letter"]
    assert (handle["field"], handle["if_match"]) == ("letter_status", '"7"')
    committed = letters_agent.post(
        "/api/v1/effects",
        {
            "snapshot_id": body["snapshot_id"],
            "action": "send_collections_letter",
            "resulting_value": "sent",
        },
        HTTP_IDEMPOTENCY_KEY="letter-acct-9",
        HTTP_IF_MATCH=handle["if_match"],
    )
    assert committed.status_code == 201, committed.content
    assert committed.json()["status"] == "accepted"
    again = reconcile(letters_agent, "acct-9")
    assert again["fields"]["letter_status"]["value"] == "sent"
    assert [reason["code"] for reason in again["decision"]["reasons"]] == ["letter_already_sent"]


def test_hardship_denies_the_letter(ledger, letters_agent):
    ledger("acct-2", "PaymentMissed", "HardshipApproved")
    body = reconcile(letters_agent, "acct-2")
    assert body["decision"]["result"] == "deny"
    assert body["decision"]["reasons"][0]["code"] == "hardship_active"


def test_unorderable_events_make_the_fields_conflict_and_refuse(ledger, letters_agent):
    ledger("acct-3", "PaymentMissed")
    sandbox_event_append(
        source="hardship-ledger",
        event_id="acct-3-x",
        type="HardshipApproved",
        subject="acct-3",
        seq=1,
    )
    body = reconcile(letters_agent, "acct-3")
    assert body["fields"]["hardship_active"]["status"] == "conflict"
    assert body["decision"]["result"] == "refuse"
    assert body["decision"]["reasons"][0]["code"] == "state_conflict"


def test_duplicate_and_reordered_delivery_do_not_change_the_decision(ledger, letters_agent):
    ledger("acct-4", "PaymentMissed", "HardshipApproved", "HardshipRevoked")
    clean = reconcile(letters_agent, "acct-4")
    sandbox_fault_add(source="hardship-ledger", kind="duplicate_delivery", count=1)
    sandbox_fault_add(source="hardship-ledger", kind="reorder", count=1)
    faulty = reconcile(letters_agent, "acct-4")
    for name in ("hardship_active", "missed_payments", "collections_eligible"):
        assert faulty["fields"][name]["value"] == clean["fields"][name]["value"]
    assert faulty["decision"]["permitted_actions"] == clean["decision"]["permitted_actions"]


def test_replay_refolds_only_events_recorded_by_the_cutoff(ledger, letters_agent):
    ledger("acct-5", "PaymentMissed")
    body = reconcile(letters_agent, "acct-5")
    assert body["decision"]["result"] == "allow"
    # Thursday: a hardship approval effective Monday arrives late.
    sandbox_event_append(
        source="hardship-ledger",
        event_id="acct-5-late",
        type="HardshipApproved",
        subject="acct-5",
        seq=2,
        valid_from=ago(hours=3) - timedelta(minutes=1),
    )
    recorded = letters_agent.post(
        f"/api/v1/snapshots/{body['snapshot_id']}/replay", {"mode": "as_recorded"}
    ).json()
    assert recorded["exact"] is True
    corrected = letters_agent.post(
        f"/api/v1/snapshots/{body['snapshot_id']}/replay", {"mode": "corrected"}
    ).json()
    changes = {item["path"]: item for item in corrected["differences"]}
    assert changes["decision.result"] == {
        "path": "decision.result",
        "recorded": "allow",
        "replayed": "deny",
    }
    assert changes["fields.hardship_active.value"]["replayed"] is True


def test_every_declared_event_type_is_one_the_reducer_applies():
    # The release gate builds its histories from the declaration: a misspelt type would be
    # folded as "ignored by contract" and the histories would prove nothing.
    starts = [[], [event("s1", 1, "HardshipApproved")], [event("s1", 1, "PaymentMissed")]]
    for kind in HARDSHIP_V3.event_types:
        assert any(
            fold(HARDSHIP_V3, [*start, event("e", 2, kind)]).values
            != fold(HARDSHIP_V3, start).values
            for start in starts
        ), kind
    assert (
        fold(HARDSHIP_V3, [event("e", 1, "AddressChanged")]).values == fold(HARDSHIP_V3, []).values
    )
