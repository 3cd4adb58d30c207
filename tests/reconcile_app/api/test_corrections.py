"""POST /api/v1/corrections: a correction taints what is downstream and lists what to review."""

from __future__ import annotations

import pytest

from reconcile_app.models import SnapshotTaint
from tests.reconcile_app.lineage_chain import chain_with_memory, collectible  # noqa: F401


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
    assert body["blast_radius"]["review"]["memorys"] == [memory["memory_id"]]
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
