"""Replay: as recorded reproduces the hash exactly; corrected shows what changed."""

from __future__ import annotations

from datetime import timedelta

import pytest

from reconcile_app.models import DecisionSnapshot
from reconcile_app.services.evidence import evidence_append
from sandbox_app.services import sandbox_fault_add
from tests.conftest import ago
from tests.reconcile_app.effects.conftest import (  # noqa: F401
    SUBJECT,
    account_goes_on_hold,
    collectible,
    reconcile,
)
from tests.reconcile_app.tamper import snapshot_content_rewrite


def replay(persona, snapshot_id: str, mode: str = "as_recorded"):
    response = persona.post(f"/api/v1/snapshots/{snapshot_id}/replay", {"mode": mode})
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.parametrize(
    "scenario", ["allow", "stale", "unavailable", "claims", "contradiction", "two_contradictions"]
)
def test_as_recorded_replay_is_exact(collectible, agent, scenario):
    body = {
        "subject": SUBJECT,
        "purpose": "collections",
        "decision_class": "collections-contact-release",
        "proposed_action": "release_collections_hold",
        "claims": [],
    }
    if scenario == "stale":
        sandbox_fault_add(source="case-service", kind="lag", seconds=900, count=1)
    if scenario == "unavailable":
        sandbox_fault_add(source="complaints-service", kind="unavailable", count=1)
    if scenario == "claims":
        body["claims"] = [
            {
                "subject": SUBJECT,
                "field": "collections_status",
                "value": "collect",
                "written_at": ago(minutes=5).isoformat(),
                "memory_class": "episodic",
            },
            {
                "subject": SUBJECT,
                "field": "collections_status",
                "value": "hold",
                "written_at": ago(hours=5).isoformat(),
            },
            {"subject": "elsewhere", "field": "collections_status", "value": 1.5e3},
        ]
    if scenario == "two_contradictions":
        # Each field contradicted: the contradictions (and their reasons) are listed in the
        # contract's field order, which PostgreSQL's jsonb does not keep for the stored reads
        # (it puts the shorter key, complaint_status, first).
        evidence_append(
            kind="observation",
            subject=SUBJECT,
            field="complaint_status",
            value="open",
            source="complaints-desk",
            observed_at=ago(minutes=1),
        )
    if scenario in ("contradiction", "two_contradictions"):
        evidence_append(
            kind="observation",
            subject=SUBJECT,
            field="collections_status",
            value="hold",
            source="hardship-desk",
            observed_at=ago(minutes=1),
        )
    snapshot = agent.post("/api/v1/reconcile", body).json()
    result = replay(agent, snapshot["snapshot_id"])
    assert result["exact"] is True, result["differences"]
    assert result["replayed_hash"] == result["original_hash"]
    assert result["differences"] == []
    assert result["unavailable_sources"] == []


later_says_hold = account_goes_on_hold


def test_wednesday_replay_never_sees_thursdays_correction(collectible, agent, operator):
    snapshot = reconcile(agent)
    assert snapshot["decision"]["result"] == "allow"
    operator.post(
        "/api/v1/corrections",
        {"evidence_id": "ev-collect", "reason": "entered against the wrong account"},
    )
    recorded = replay(agent, snapshot["snapshot_id"])
    assert recorded["exact"] is True
    corrected = replay(agent, snapshot["snapshot_id"], "corrected")
    assert corrected["exact"] is False
    paths = {item["path"]: item for item in corrected["differences"]}
    assert paths["decision.result"]["recorded"] == "allow"
    assert paths["decision.result"]["replayed"] == "refuse"
    assert "evidence_missing" in paths["decision.reasons"]["replayed"]
    detail = agent.client.get(f"/api/v1/snapshots/{snapshot['snapshot_id']}").json()
    assert len(detail["tainted_by"]) == 1


def test_corrected_replay_ignores_facts_observed_after_the_decision(collectible, agent):
    snapshot = reconcile(agent)
    # Evidence recorded later about a later moment is not a correction of that decision.
    later_says_hold(observed_at=ago(seconds=-5) + timedelta())
    corrected = replay(agent, snapshot["snapshot_id"], "corrected")
    assert corrected["exact"] is True


def test_corrected_replay_ignores_a_later_observation_that_supersedes_its_support(
    collectible, agent
):
    snapshot = reconcile(agent)
    # The account left collections after the decision: a routine observation that replaces
    # the entry the decision rested on. It says nothing about what held then, so it is no
    # correction of that decision (and taints nothing).
    later_says_hold(observed_at=ago(seconds=-5), supersedes="ev-collect")
    corrected = replay(agent, snapshot["snapshot_id"], "corrected")
    assert corrected["differences"] == []
    assert corrected["exact"] is True


def test_a_correction_replacing_the_support_counts_however_late_it_is_dated(
    collectible, agent, operator
):
    snapshot = reconcile(agent)
    response = operator.post(
        "/api/v1/corrections",
        {
            "evidence_id": "ev-collect",
            "reason": "entered against the wrong account",
            "replacement": {"value": "hold", "observed_at": ago(seconds=-5).isoformat()},
        },
    )
    assert response.status_code in (201, 202), response.content
    corrected = replay(agent, snapshot["snapshot_id"], "corrected")
    paths = {item["path"]: item for item in corrected["differences"]}
    assert paths["decision.result"]["replayed"] == "refuse"
    assert "evidence_missing" in paths["decision.reasons"]["replayed"]


@pytest.mark.parametrize("mode", ["x", None, 3, ["corrected"]])
def test_replay_mode_is_validated(collectible, agent, mode):
    snapshot = reconcile(agent)
    response = agent.post(f"/api/v1/snapshots/{snapshot['snapshot_id']}/replay", {"mode": mode})
    # The code the operation declares (and the console answers), not DRF's generic one.
    assert (response.status_code, response.json()["code"]) == (400, "invalid_mode")
    assert "mode" in response.json()["errors"]


def test_corrected_replay_keeps_what_the_decision_knew_dated_just_ahead(collectible, agent):
    # An attestation may be dated up to 300 s ahead of the server's clock (skew): recorded
    # before the decision, it is support the decision rested on, not a late arrival.
    ahead = evidence_append(
        kind="observation",
        subject=SUBJECT,
        field="collections_status",
        value="collect",
        source="case-ledger",
        observed_at=ago(seconds=-60),
    )
    snapshot = reconcile(agent)
    assert snapshot["fields"]["collections_status"]["evidence"] == [ahead.evidence_id]
    # Nothing was corrected since: the corrected replay must not report a change.
    corrected = replay(agent, snapshot["snapshot_id"], "corrected")
    assert corrected["differences"] == []
    assert corrected["exact"] is True


@pytest.mark.parametrize("mode", ["as_recorded", "corrected"])
def test_a_snapshot_edited_after_it_was_issued_never_replays_exact(collectible, agent, mode):
    """The replay rebuilds the decision from the stored inputs, so an edited outcome (a
    `deny` rewritten `allow` in SQL, its hash left as issued) rebuilds the original content
    and its hash: the replay must still not call the stored record exact."""
    account_goes_on_hold(observed_at=ago(minutes=1))
    snapshot = reconcile(agent, "retain_manual_review")
    assert snapshot["decision"]["result"] == "deny", snapshot["decision"]
    content = DecisionSnapshot.objects.get(snapshot_id=snapshot["snapshot_id"]).content
    content["decision"] = {**content["decision"], "result": "allow"}
    snapshot_content_rewrite(snapshot["snapshot_id"], content)

    result = replay(agent, snapshot["snapshot_id"], mode)
    assert result["exact"] is False
    assert {"path": "decision.result", "recorded": "allow", "replayed": "deny"} in result[
        "differences"
    ]
