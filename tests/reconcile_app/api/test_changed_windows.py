"""`changed_after`/`changed_before` on escalations, contradictions, corrections and memories: an
incremental copy sees a row again when it is decided, seen again, resolved, completed or
expired,
not only when it was opened (docs/api.md, "Copying records incrementally")."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from django.utils import timezone

from reconcile_app.canonical import rfc3339
from reconcile_app.services.memory import memories_expire
from tests.factories import EvidenceFactory, reconcile_body, seed_collectible
from tests.reconcile_app.api.test_contradictions import later_hold_evidence
from tests.reconcile_app.api.test_corrections_list import corrected
from tests.reconcile_app.api.test_memories import MEMORIES, memory

ESCALATIONS = "/api/v1/escalations"
CONTRADICTIONS = "/api/v1/contradictions"


def ids(response: Any, key: str) -> list[Any]:
    assert response.status_code == 200, response.content
    return [item[key] for item in response.json()["results"]]


def test_a_decided_escalation_and_a_resolved_contradiction_are_listed_again(
    estate, agent, reviewer, operator, auditor, now
):
    seed_collectible(now)
    later_hold_evidence(now)
    snapshot = agent.post("/api/v1/reconcile", reconcile_body()).json()
    escalation_id = snapshot["escalation_id"]
    [contradiction] = snapshot["contradictions"]
    copied = rfc3339(timezone.now())

    for path, key in ((ESCALATIONS, "escalation_id"), (CONTRADICTIONS, "id")):
        assert ids(auditor.get(path, changed_after=copied), key) == []

    approved = reviewer.post(f"{ESCALATIONS}/{escalation_id}/approve", {"rationale": "seen"})
    assert approved.status_code == 200, approved.content
    resolved = operator.post(
        f"{CONTRADICTIONS}/{contradiction['id']}/resolve", {"note": "ledger is right"}
    )
    assert resolved.status_code == 200, resolved.content
    later = rfc3339(timezone.now())

    for path, key, row in (
        (ESCALATIONS, "escalation_id", escalation_id),
        (CONTRADICTIONS, "id", contradiction["id"]),
    ):
        # Opened before the copy, decided after it: in both windows, once in each.
        assert ids(auditor.get(path, changed_before=copied), key) == [row]
        assert ids(auditor.get(path, changed_after=copied, changed_before=later), key) == [row]
        assert ids(auditor.get(path, changed_after=later), key) == []
        # The agent's own escalation, through its own key.
    assert ids(agent.get(ESCALATIONS, changed_after=copied), "escalation_id") == [escalation_id]


def test_a_correction_is_in_the_window_it_was_made_in(operator, auditor):
    before = rfc3339(timezone.now())
    made = corrected(operator, subject="account-1", field="balance", value=3)
    after = rfc3339(timezone.now())

    assert ids(auditor.get("/api/v1/corrections", changed_after=before), "correction_id") == [
        made.correction_id
    ]
    assert ids(auditor.get("/api/v1/corrections", changed_after=after), "correction_id") == []
    assert ids(auditor.get("/api/v1/corrections", changed_before=before), "correction_id") == []


@pytest.mark.parametrize(
    "path", [ESCALATIONS, CONTRADICTIONS, "/api/v1/corrections", "/api/v1/memories"]
)
def test_a_change_window_it_cannot_read_is_a_problem(auditor, path):
    response = auditor.get(path, changed_after="last tuesday")

    assert response.status_code == 400, response.content
    assert response["Content-Type"].startswith("application/problem+json")


def test_a_memory_that_expired_after_the_copy_is_listed_again(agent, auditor):
    EvidenceFactory(evidence_id="ev-002", value="hold")
    written = agent.post(MEMORIES, memory(valid_until="2030-01-01"))
    kept = agent.post(MEMORIES, memory(valid_until="2099-12-31"))
    assert written.status_code == kept.status_code == 201, written.content
    copied = rfc3339(timezone.now())

    assert memories_expire(today=date(2031, 1, 1)) == 1
    later = rfc3339(timezone.now())

    expired = written.json()["memory_id"]
    assert ids(agent.get(MEMORIES, changed_after=copied), "memory_id") == [expired]
    assert ids(auditor.get(MEMORIES, changed_after=copied, changed_before=later), "memory_id") == [
        expired
    ]
    assert set(ids(auditor.get(MEMORIES, changed_before=copied), "memory_id")) == {
        expired,
        kept.json()["memory_id"],
    }
    assert ids(auditor.get(MEMORIES, changed_after=later), "memory_id") == []
    assert auditor.get(MEMORIES, changed_after=copied).json()["results"][0]["status"] == "expired"
