"""POST /api/v1/corrections: a correction taints what is downstream and lists what to review."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from reconcile_app.api.serializers import CorrectionReviewOutput
from reconcile_app.models import Correction, EvidenceEntry, SnapshotTaint
from tests.reconcile_app.effects.conftest import (
    SUBJECT,
    case_ledger_says_collect,
    reconcile,
    remember_collect,
)
from tests.reconcile_app.lineage_chain import (  # noqa: F401 (a fixture)
    chain_with_memory,
    collectible,
    memory_from,
)


@pytest.fixture
def chain(collectible, agent, eager_tasks, django_capture_on_commit_callbacks):
    """ev-collect → snapshot → decision → effect → receipt/readback, and a memory from it."""
    return chain_with_memory(agent, django_capture_on_commit_callbacks)


def test_correction_taints_snapshots_and_lists_what_to_review(chain, operator):
    snapshot, memory = chain
    response = operator.post(
        "/api/v1/corrections", {"evidence_id": "ev-collect", "reason": "keyed to the wrong account"}
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["status"] == "complete"
    assert body["correction"]["revokes"] == "ev-collect"
    assert body["blast_radius"]["review"]["snapshots"] == [snapshot["snapshot_id"]]
    assert body["blast_radius"]["review"]["effects"] == ["l-1"]
    assert body["blast_radius"]["review"]["memories"] == [memory["memory_id"]]
    # The lists are keyed as the schema names them (a client built from it reads these).
    assert set(body["blast_radius"]["review"]) == set(CorrectionReviewOutput().fields)
    assert SnapshotTaint.objects.filter(snapshot__snapshot_id=snapshot["snapshot_id"]).count() == 1
    again = operator.post("/api/v1/corrections", {"evidence_id": "ev-collect", "reason": "x"})
    assert (again.status_code, again.json()["code"]) == (409, "already_corrected")


def test_correction_with_replacement_supersedes(chain, operator):
    body = operator.post(
        "/api/v1/corrections",
        {
            "evidence_id": "ev-collect",
            "reason": "typo",
            "replacement": {"value": "hold"},
        },
    ).json()
    assert body["correction"]["supersedes"] == "ev-collect"
    assert body["correction"]["value"] == "hold"


def test_only_operators_correct(chain, auditor, agent):
    for persona in (auditor, agent):
        response = persona.post("/api/v1/corrections", {"evidence_id": "ev-collect", "reason": "x"})
        assert response.status_code == 403


def test_a_corrections_lists_are_what_it_reached_as_its_counts_are(chain, operator, agent):
    """Its counts and taints are fixed when it completes: a memory derived from the tainted
    snapshot afterwards is downstream of the entry now, but the correction did not reach it."""
    snapshot, memory = chain
    made = operator.post(
        "/api/v1/corrections", {"evidence_id": "ev-collect", "reason": "keyed to the wrong account"}
    ).json()
    later = memory_from(agent, snapshot["snapshot_id"])
    assert later.status_code == 201, later.content
    radius = operator.get(f"/api/v1/corrections/{made['correction_id']}").json()["blast_radius"]
    assert radius["review"]["memories"] == [memory["memory_id"]]
    assert radius["counts"]["memory"] == len(radius["review"]["memories"])
    assert radius["counts"]["snapshot"] == len(radius["review"]["snapshots"])
    now = operator.get("/api/v1/lineage/evidence:ev-collect/descendants?kinds=memory").json()
    assert later.json()["memory_id"] in {node["ref"] for node in now["nodes"]}


def test_a_replacement_observed_in_the_future_is_refused(collectible, operator):
    """It would stay the field's latest entry and contradict every state to come."""
    entries = EvidenceEntry.objects.count()
    response = operator.post(
        "/api/v1/corrections",
        {
            "evidence_id": "ev-collect",
            "reason": "restate",
            "replacement": {"value": "collect", "observed_at": "2099-01-01T00:00:00Z"},
        },
    )
    assert (response.status_code, response.json()["code"]) == (422, "observed_in_future")
    assert not Correction.objects.exists() and EvidenceEntry.objects.count() == entries


def test_a_revocation_is_undone_by_a_replacement_not_by_revoking_it(collectible, agent, operator):
    assert reconcile(agent)["decision"]["result"] == "allow"
    first = operator.post("/api/v1/corrections", {"evidence_id": "ev-collect", "reason": "wrong"})
    assert reconcile(agent)["decision"]["result"] == "refuse"  # nothing supports the state
    revocation = first.json()["correction"]["evidence_id"]
    undo = operator.post(
        "/api/v1/corrections", {"evidence_id": revocation, "reason": "revoked the wrong entry"}
    )
    assert (undo.status_code, undo.json()["code"]) == (409, "replacement_required")
    assert "ev-collect" in undo.json()["detail"] and Correction.objects.count() == 1
    restored = operator.post(
        "/api/v1/corrections",
        {
            "evidence_id": revocation,
            "reason": "revoked the wrong entry",
            "replacement": {"value": "collect"},
        },
    )
    assert restored.status_code == 201, restored.content
    assert restored.json()["correction"]["supersedes"] == revocation
    assert reconcile(agent)["decision"]["result"] == "allow"


def test_a_replacement_inherits_no_time_from_the_future(collectible, operator):
    """Without its own observed_at a replacement takes the corrected entry's: an entry dated
    ahead (an owner's clock, a readback) must not pass it on as the field's latest."""
    from datetime import timedelta

    from django.utils import timezone

    from reconcile_app.services.evidence import evidence_append

    evidence_append(
        kind="observation",
        subject="account-17",
        field="collections_status",
        value="collect",
        source="case-ledger",
        observed_at=timezone.now() + timedelta(hours=2),
        evidence_id="ev-ahead",
    )
    response = operator.post(
        "/api/v1/corrections",
        {"evidence_id": "ev-ahead", "reason": "restate", "replacement": {"value": "hold"}},
    )
    assert (response.status_code, response.json()["code"]) == (422, "observed_in_future")
    assert not Correction.objects.exists()


def test_a_decision_on_the_entry_that_superseded_the_corrected_one_is_not_tainted(
    collectible, agent, operator
):
    """Superseding is invalidation, not derivation: what was decided on the newer entry was
    decided on the corrected value, and the correction of the older one leaves it alone."""
    used_old = reconcile(agent)
    newer = case_ledger_says_collect(timezone.now() - timedelta(minutes=5), supersedes="ev-collect")
    used_new = reconcile(agent)
    assert [entry["evidence_id"] for entry in used_new["evidence_manifest"]] == [newer.evidence_id]

    body = operator.post(
        "/api/v1/corrections", {"evidence_id": "ev-collect", "reason": "wrong account"}
    ).json()

    assert body["blast_radius"]["review"]["snapshots"] == [used_old["snapshot_id"]]
    tainted = SnapshotTaint.objects.values_list("snapshot__snapshot_id", flat=True)
    assert list(tainted) == [used_old["snapshot_id"]]
    below = operator.get("/api/v1/lineage/evidence:ev-collect/descendants").json()
    assert used_new["snapshot_id"] not in {node["ref"] for node in below["nodes"]}
    # The graph still says what invalidated the entry: a PROV export draws it.
    prov = operator.get("/api/v1/lineage/evidence:ev-collect/prov").json()
    assert "wasInvalidatedBy" in prov


def test_a_decision_recalling_the_memory_that_superseded_one_on_the_corrected_entry_is_not_tainted(
    collectible, agent, operator
):
    """A memory superseding another replaces it, it is not made from it (as an entry
    superseding another is not): a decision that recalled the successor, made on other
    evidence, is outside the correction of the predecessor's grounds."""

    def remember(derived_from: str, **extra: str) -> str:
        return remember_collect(agent, [derived_from], **extra)

    older = remember("ev-collect")
    recheck = case_ledger_says_collect(timezone.now() - timedelta(minutes=5))
    newer = remember(recheck.evidence_id, supersedes=older)
    recalled = reconcile(
        agent, claims=[{"subject": SUBJECT, "field": "collections_status", "memory_id": newer}]
    )
    assert [item["evidence_id"] for item in recalled["evidence_manifest"]] == [recheck.evidence_id]

    body = operator.post(
        "/api/v1/corrections", {"evidence_id": "ev-collect", "reason": "wrong account"}
    ).json()

    assert body["blast_radius"]["review"]["memories"] == [older]
    assert body["blast_radius"]["review"]["snapshots"] == []
    assert not SnapshotTaint.objects.filter(snapshot__snapshot_id=recalled["snapshot_id"]).exists()
    # The graph still says what replaced the older memory: a PROV export draws it.
    prov = operator.get(f"/api/v1/lineage/memory:{older}/prov").json()
    assert "wasInvalidatedBy" in prov
