"""`load_demo`: the seed scenarios through the real protocol, and idempotent."""

from __future__ import annotations

import io
import json
import stat
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.core.management import call_command
from rest_framework.test import APIClient

from reconcile_app.models import (
    ClaimVerdict,
    Contract,
    Contradiction,
    DecisionSnapshot,
    Escalation,
    EvidenceEntry,
    MemoryRecord,
    Principal,
)
from reconcile_app.selectors.lineage import memory_fed
from reconcile_app.services.principals import api_key_authenticate
from sandbox_app.models import SandboxFault, SandboxRecord


def load_demo() -> str:
    out = io.StringIO()
    call_command("load_demo", stdout=out, stderr=io.StringIO())
    return out.getvalue()


def counts() -> dict[str, int]:
    models = (
        Contract,
        DecisionSnapshot,
        ClaimVerdict,
        Contradiction,
        EvidenceEntry,
        MemoryRecord,
        Principal,
        SandboxRecord,
        SandboxFault,
        User,
    )
    return {model.__name__: model.objects.count() for model in models}


@pytest.fixture
def var_dir(settings: Any, tmp_path: Path) -> Path:
    settings.VAR_DIR = tmp_path
    return tmp_path


def batch() -> list[DecisionSnapshot]:
    return list(DecisionSnapshot.objects.order_by("issued_at", "id"))


def verdicts(snapshot: DecisionSnapshot) -> list[tuple[Any, str]]:
    return [(item.value, item.verdict) for item in snapshot.claim_verdicts.order_by("index")]


def codes(snapshot: DecisionSnapshot) -> list[str]:
    return [reason["code"] for reason in snapshot.content["decision"]["reasons"]]


def test_load_demo_twice_writes_nothing_the_second_time(db: Any, var_dir: Path) -> None:
    first_output = load_demo()
    after_first = counts()
    key = (var_dir / "demo-agent.key").read_text().strip()

    second_output = load_demo()

    assert counts() == after_first
    assert after_first["Contract"] == 4
    assert after_first["DecisionSnapshot"] == 8
    assert after_first["EvidenceEntry"] == 12
    assert after_first["MemoryRecord"] == 11
    assert after_first["SandboxFault"] == 0  # the batch's injected faults were used up
    assert key in first_output
    assert key not in second_output  # shown once
    assert (var_dir / "demo-agent.key").read_text().strip() == key
    assert "first batch not issued again" in second_output


def test_the_demo_runbook_waits_for_a_reviewer(db: Any, var_dir: Path) -> None:
    load_demo()
    runbook = MemoryRecord.objects.get(memory_id="mem-demo-007")
    assert (runbook.memory_class, runbook.status) == ("runbooks", "suggested")
    promotion = Escalation.objects.get(memory=runbook)
    assert (promotion.code, promotion.status, promotion.owner) == (
        "promotion",
        "open",
        "platform-operations",
    )
    load_demo()
    assert Escalation.objects.filter(memory=runbook).count() == 1


def test_demo_agent_key_is_private_and_acts_with_all_demo_capabilities(
    db: Any, var_dir: Path
) -> None:
    load_demo()
    key_file = var_dir / "demo-agent.key"

    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    agent = api_key_authenticate(key_file.read_text().strip())
    assert agent is not None and agent.name == "demo-agent"
    assert sorted(str(c) for c in agent.capabilities.all()) == [
        "attest:case-ledger",
        "attest:customer-master",
        "attest:warehouse-event-ledger",
        "collections-contact-release:release_collections_hold",
        "collections-contact-release:retain_manual_review",
        "collections-letter:send_collections_letter",
        "dispatch-card:dispatch_card",
        "fact:baseline.*",
        "warehouse-pick:pick_pallet",
    ]


def test_demo_people_log_in_with_their_demo_passwords(db: Any, var_dir: Path) -> None:
    load_demo()

    for username, group in (("olivia", "operator"), ("rhys", "reviewer"), ("ada", "auditor")):
        user = authenticate(username=username, password=f"demo-{username}")
        assert user is not None
        assert list(user.groups.values_list("name", flat=True)) == [group]


def test_demo_batch_reaches_the_seed_verdicts(db: Any, var_dir: Path) -> None:
    load_demo()
    hardship, pick, dispatch, lagging, unavailable, letter_denied, letter_allowed, contradicted = (
        batch()
    )

    assert (hardship.subject, hardship.result, hardship.completeness) == (
        "account-17",
        "deny",
        "complete",
    )
    assert codes(hardship) == ["hardship_hold"]
    assert verdicts(hardship) == [("hold", "confirmed"), ("collect", "superseded")]
    state = hardship.reads.get(field="collections_status")
    assert (state.value, state.version, state.evidence) == ("hold", 42, ["ev-002"])
    assert hardship.reads.get(field="complaint_status").value == "none"

    assert (pick.subject, pick.result) == ("P17", "allow")
    assert pick.decision_receipt.permitted_actions == ["pick_pallet"]
    assert verdicts(pick) == [("bay 4", "superseded")]
    assert pick.claim_verdicts.get().evidence == ["ev-004"]
    bay = pick.reads.get(field="pallet_bay")
    assert (bay.value, bay.version) == ("bay 9", 318)

    assert (dispatch.subject, dispatch.result) == ("customer-1042", "allow")
    assert dispatch.decision_receipt.permitted_actions == ["dispatch_card"]
    assert verdicts(dispatch) == [("A", "superseded"), ("C", "confirmed")]
    assert dispatch.reads.get(field="address_verification").value == "verified"

    assert (lagging.subject, lagging.result, lagging.completeness) == (
        "account-17",
        "refuse",
        "incomplete",
    )
    assert "stale_state" in codes(lagging)
    assert lagging.reads.get(field="collections_status").status == "stale"
    assert verdicts(lagging) == [("hold", "stale_state")]

    assert (unavailable.subject, unavailable.result) == ("P17", "refuse")
    assert "state_unavailable" in codes(unavailable)
    assert unavailable.reads.get(field="pallet_bay").status == "unavailable"

    assert (letter_denied.subject, letter_denied.result) == ("account-17", "deny")
    assert codes(letter_denied) == ["hardship_active"]
    assert letter_denied.reducer_version == "hardship@3"
    eligible = letter_allowed.reads.get(field="collections_eligible")
    assert (letter_allowed.result, eligible.value) == ("allow", True)
    assert (
        letter_allowed.content["fields"]["collections_eligible"]["inputs"]["missed_payments"] == 1
    )

    assert (contradicted.subject, contradicted.result) == ("account-17", "deny")
    assert verdicts(contradicted) == [("open", "contradicted")]
    row = contradicted.contradictions.get()
    assert (row.kind, row.field, row.state_value, row.other_value, row.status) == (
        "memory_vs_state",
        "complaint_status",
        "none",
        "open",
        "open",
    )


def test_demo_claims_are_recalled_so_a_memorys_blast_radius_lists_what_it_fed(
    db: Any, var_dir: Path
) -> None:
    load_demo()
    hardship = batch()[0]
    assert [item.memory_id for item in hardship.claim_verdicts.order_by("index")] == [
        "mem-demo-002",
        "mem-demo-001",
    ]
    fed = memory_fed(memory_id="mem-demo-001")
    assert fed["snapshot"] == [hardship.snapshot_id]
    assert fed["decision"] == [hardship.decision_receipt.decision_id]


def test_demo_agent_key_reconciles_over_the_api(db: Any, var_dir: Path) -> None:
    load_demo()
    client = APIClient()
    client.credentials(
        HTTP_AUTHORIZATION=f"Bearer {(var_dir / 'demo-agent.key').read_text().strip()}"
    )

    response = client.post(
        "/api/v1/reconcile",
        json.dumps(
            {
                "subject": "P17",
                "purpose": "fulfilment",
                "decision_class": "warehouse-pick",
                "proposed_action": "pick_pallet",
                "claims": [
                    {
                        "subject": "P17",
                        "field": "pallet_bay",
                        "value": "bay 4",
                        "written_at": "2020-01-01T00:00:00Z",
                        "memory_class": "episodic",
                        "derived_from": ["ev-003"],
                    }
                ],
            }
        ),
        content_type="application/json",
    )

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["decision"]["result"] == "allow"
    assert body["claims"][0]["verdict"] == "superseded"
