"""A source quarantined after a decision read it stops that decision's commit (423), as
revoked evidence does: the quarantine says its answers cannot be trusted."""

from __future__ import annotations

from reconcile_app.models import Effect
from tests.conftest import COLLECTIONS
from tests.factories import load_yaml
from tests.reconcile_app.effects.conftest import collectible, commit, reconcile  # noqa: F401

# The demo's contract with the complaint status required and able to deny: the commit goes
# to case-service, the decision also rests on complaints-service's answer.
REQUIRED_COMPLAINTS = f"""
decision_class: {COLLECTIONS}
version: "7.6"
purpose: collections
obligation: {{mutability: low, authority: single, consequence: low, replay: none}}
required:
  - {{field: collections_status, source: case-service, max_age_seconds: 300, evidence: required}}
  - {{field: complaint_status, source: complaints-service, max_age_seconds: 600}}
actions:
  release_collections_hold: {{field: collections_status}}
  retain_manual_review: {{field: collections_status}}
policy:
  version: "collections-2026-12-q"
  deny: [{{when: 'fields.collections_status == "hold"', code: hardship_hold}},
         {{when: 'fields.complaint_status == "open"', code: open_complaint}}]
  allow: [{{when: 'true', permits: [release_collections_hold, retain_manual_review]}}]
commit_window_seconds: 120
"""


def quarantine(operator, source: str) -> None:
    response = operator.post(
        "/api/v1/quarantines", {"scope": "source", "target": source, "reason": "poisoned feed"}
    )
    assert response.status_code == 202, response.content


def test_a_decision_read_from_a_source_quarantined_since_commits_nothing(
    collectible, agent, operator, tmp_path
):
    load_yaml(tmp_path, {"q.yaml": REQUIRED_COMPLAINTS})
    snapshot = reconcile(agent, "release_collections_hold")
    assert snapshot["contract"]["version"] == "7.6"
    assert snapshot["decision"]["result"] == "allow"
    assert snapshot["fields"]["complaint_status"]["source"] == "complaints-service"

    quarantine(operator, "complaints-service")
    response = commit(agent, snapshot, "release_collections_hold", "released", "k-q-read")

    assert response.status_code == 423, response.content
    assert (response.json()["code"], response.json()["source"]) == (
        "source_quarantined",
        "complaints-service",
    )
    assert not Effect.objects.exists()


def test_a_read_already_quarantined_when_decided_holds_nothing_up(collectible, agent, operator):
    # The optional complaint status was quarantined before the decision: it was made without
    # it (degraded), so the quarantine changes nothing about what it authorises.
    quarantine(operator, "complaints-service")
    snapshot = reconcile(agent, "release_collections_hold")
    assert snapshot["fields"]["complaint_status"]["status"] == "quarantined"
    assert snapshot["decision"]["result"] == "allow"

    response = commit(agent, snapshot, "release_collections_hold", "released", "k-q-before")

    assert response.status_code == 201, response.content
