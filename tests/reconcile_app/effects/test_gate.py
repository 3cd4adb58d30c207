"""What a snapshot must still say when its effect is committed (services/effects/gate.py).

Side doors these close (issue 11): pinning an older contract version to get `allow`; a
snapshot whose evidence was revoked still authorising; an allowed action writing any value.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import yaml
from django.utils import timezone

from reconcile_app.models import Effect
from sandbox_app.models import SandboxRecord
from tests.conftest import COLLECTIONS
from tests.factories import load_yaml
from tests.openapi_conformance import SCHEMA_PATH
from tests.reconcile_app.effects.conftest import SUBJECT, commit, reconcile

TIGHTENED = f"""
decision_class: {COLLECTIONS}
version: "7.4"
purpose: collections
required:
  - {{field: collections_status, source: case-service, max_age_seconds: 300, evidence: required}}
optional:
  - {{field: complaint_status, source: complaints-service, max_age_seconds: 600}}
actions:
  release_collections_hold: {{field: collections_status, values: [released]}}
  retain_manual_review: {{field: collections_status, values: [manual_review]}}
policy:
  version: "collections-2026-12"
  deny: [{{when: 'fields.collections_status == "hold"', code: hardship_hold}}]
  allow: [{{when: 'true', permits: [release_collections_hold, retain_manual_review]}}]
"""


def undeclared(problem: dict[str, Any]) -> set[str]:
    """Members of a commit's refusal docs/openapi.yaml does not declare: docs/api.md names
    them for a client to rely on, and a client generated from the schema would not have them."""
    schemas = yaml.safe_load(SCHEMA_PATH.read_text())["components"]["schemas"]
    return set(problem) - set(schemas["EffectProblem"]["properties"])


DENY_COLLECT = TIGHTENED.replace('"7.4"', '"7.5"').replace(
    'fields.collections_status == "hold"', 'fields.collections_status == "collect"'
)


def owner_value() -> Any:
    return SandboxRecord.objects.get(subject=SUBJECT, field="collections_status").value


def reconcile_with(persona, **extra: Any):
    return persona.post(
        "/api/v1/reconcile",
        {
            "subject": SUBJECT,
            "purpose": "collections",
            "decision_class": COLLECTIONS,
            "proposed_action": "retain_manual_review",
            **extra,
        },
    )


# --- Only the active contract version is served ----------------------------------------------


def test_pinning_an_older_version_after_the_policy_tightened_is_refused(
    collectible, agent, tmp_path
):
    load_yaml(tmp_path, {"tightened.yaml": DENY_COLLECT})

    pinned = reconcile_with(agent, contract_version="7.3")

    assert pinned.status_code == 422
    assert pinned["Content-Type"] == "application/problem+json"
    assert pinned.json()["code"] == "contract_version_inactive"
    assert pinned.json()["active_version"] == "7.5"
    served = reconcile_with(agent)
    assert served.status_code == 201
    assert served.json()["contract"]["version"] == "7.5"
    assert served.json()["decision"]["result"] == "deny"


def test_pinning_the_active_version_is_served_and_an_unknown_one_is_refused(collectible, agent):
    assert reconcile_with(agent, contract_version="7.3").status_code == 201
    unknown = reconcile_with(agent, contract_version="9.9")
    assert (unknown.status_code, unknown.json()["code"]) == (422, "contract_version_inactive")


def test_a_snapshot_whose_version_was_replaced_no_longer_authorises(collectible, agent, tmp_path):
    snapshot = reconcile(agent, "retain_manual_review")
    assert snapshot["decision"]["result"] == "allow"
    load_yaml(tmp_path, {"tightened.yaml": TIGHTENED})

    response = commit(agent, snapshot, "retain_manual_review", "manual_review", "k-superseded")

    assert (response.status_code, response.json()["code"]) == (409, "contract_superseded")
    assert (response.json()["decision_class"], response.json()["version"]) == (
        snapshot["contract"]["decision_class"],
        snapshot["contract"]["version"],
    )
    assert undeclared(response.json()) == set()
    assert not Effect.objects.exists()
    assert owner_value() == "collect"


# --- A correction withdraws the authority of what relied on it --------------------------------


def test_revoking_the_evidence_a_snapshot_used_stops_its_commit(collectible, agent, operator):
    snapshot = reconcile(agent, "retain_manual_review")
    assert "ev-collect" in snapshot["fields"]["collections_status"]["evidence"]
    correction = operator.post(
        "/api/v1/corrections", {"evidence_id": "ev-collect", "reason": "entered on wrong account"}
    )
    assert correction.status_code in (201, 202), correction.content

    response = commit(agent, snapshot, "retain_manual_review", "manual_review", "k-tainted")

    assert (response.status_code, response.json()["code"]) == (409, "snapshot_tainted")
    assert response.json()["corrections"] == [correction.json()["correction_id"]]
    # Which evidence it used was withdrawn, and by which entry: the agent need not look.
    assert response.json()["withdrawn"] == ["ev-collect"]
    assert len(response.json()["withdrawn_by"]) == 1
    assert undeclared(response.json()) == set()
    assert not Effect.objects.exists()
    assert owner_value() == "collect"


def test_superseding_the_evidence_a_snapshot_used_stops_its_commit(collectible, agent, operator):
    snapshot = reconcile(agent, "retain_manual_review")
    operator.post(
        "/api/v1/corrections",
        {
            "evidence_id": "ev-collect",
            "reason": "the ledger had the wrong value",
            "replacement": {"value": "hold"},
        },
    )
    response = commit(agent, snapshot, "retain_manual_review", "manual_review", "k-replaced")
    assert (response.status_code, response.json()["code"]) == (409, "snapshot_tainted")
    assert response.json()["withdrawn_by"]


# --- The payload is bound ---------------------------------------------------------------------


def test_a_bound_value_is_the_only_value_the_snapshot_authorises(collectible, agent):
    response = reconcile_with(agent, proposed_value="manual_review")
    assert response.status_code == 201, response.content
    snapshot = response.json()

    other = commit(agent, snapshot, "retain_manual_review", "dispatched", "k-unbound")
    assert (other.status_code, other.json()["code"]) == (403, "effect_not_bound")
    assert not Effect.objects.exists()

    bound = commit(agent, snapshot, "retain_manual_review", "manual_review", "k-bound")
    assert bound.status_code == 201, bound.content
    assert owner_value() == "manual_review"


def test_the_snapshot_says_how_to_act_on_each_permitted_action(collectible, agent):
    before = timezone.now()
    snapshot = reconcile_with(agent, proposed_value="manual_review").json()

    assert snapshot["proposed_value"] == "manual_review"
    assert set(snapshot["actions"]) == {"retain_manual_review"}
    how = snapshot["actions"]["retain_manual_review"]
    assert how["field"] == "collections_status"
    assert how["if_match"] == '"42"'
    deadline = timezone.datetime.fromisoformat(how["commit_deadline"].replace("Z", "+00:00"))
    assert before + timedelta(seconds=110) < deadline <= timezone.now() + timedelta(seconds=120)


def test_an_action_writes_only_the_values_its_contract_lists(collectible, agent, tmp_path):
    load_yaml(tmp_path, {"tightened.yaml": TIGHTENED})
    snapshot = reconcile(agent, "retain_manual_review")

    outside = commit(agent, snapshot, "retain_manual_review", "dispatched", "k-outside")

    assert (outside.status_code, outside.json()["code"]) == (403, "value_not_permitted")
    assert outside.json()["permitted_values"] == ["manual_review"]
    assert not Effect.objects.exists()
    inside = commit(agent, snapshot, "retain_manual_review", "manual_review", "k-inside")
    assert inside.status_code == 201, inside.content


def test_proposing_a_value_the_action_may_not_write_is_denied(collectible, agent, tmp_path):
    load_yaml(tmp_path, {"tightened.yaml": TIGHTENED})

    snapshot = reconcile_with(agent, proposed_value="dispatched").json()

    assert snapshot["decision"]["result"] == "deny"
    assert [r["code"] for r in snapshot["decision"]["reasons"]] == ["value_not_permitted"]


def test_policy_sees_the_proposed_value(collectible, agent, tmp_path):
    load_yaml(
        tmp_path,
        {
            "bound.yaml": TIGHTENED.replace('"7.4"', '"8.0"')
            .replace(", values: [manual_review]", "")
            .replace(
                "allow: [{when: 'true',",
                "allow: [{when: 'has(effect.value) && effect.value != fields.collections_status',",
            )
        },
    )
    unchanged = reconcile_with(agent, proposed_value="collect").json()
    changed = reconcile_with(agent, proposed_value="manual_review").json()
    unbound = reconcile_with(agent).json()

    assert unchanged["decision"]["result"] == "deny"
    assert changed["decision"]["result"] == "allow"
    assert unbound["decision"]["result"] == "deny"  # `has(effect.value)` is false


def test_a_value_without_an_action_is_refused(collectible, agent):
    response = reconcile_with(agent, proposed_action="", proposed_value="manual_review")
    assert (response.status_code, response.json()["code"]) == (400, "proposed_action_missing")


@pytest.mark.parametrize(
    ("value", "near_miss"), [(None, ""), (0, False), (False, 0), ({"a": [1, 2]}, {"a": [2, 1]})]
)
def test_any_json_value_is_bound_exactly(collectible, agent, value, near_miss):
    snapshot = reconcile_with(agent, proposed_value=value).json()
    assert snapshot["proposed_value"] == value
    response = commit(agent, snapshot, "retain_manual_review", near_miss, "k-near")
    assert (response.status_code, response.json()["code"]) == (403, "effect_not_bound")
