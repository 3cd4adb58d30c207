"""One approval, one state (docs/api.md, effects): a retry that joined an escalation acts on
the approval only if it read what the reviewer's page showed — every field policy decided on,
not only the one the action writes."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_app.models import Effect
from tests.conftest import make_agent
from tests.factories import SandboxRecordFactory
from tests.reconcile_app.api.test_reconcile_policy import lab_forced_live, lab_reconcile


@pytest.fixture
def flagged(db, tmp_path):
    """lab-check escalates any set flag (one code, whatever the flag says); `adjust` writes
    `level`, not the flag."""
    lab_forced_live(
        tmp_path,
        "  escalate: [{when: 'has(fields.flag) && fields.flag != \"none\"', "
        "code: flag_set}]\n"
        "  allow: [{when: 'true', permits: [adjust]}]",
    )
    SandboxRecordFactory(source="lab-service", subject="sample-1", field="level", value=1)
    SandboxRecordFactory(source="lab-service", subject="sample-1", field="flag", value="minor")
    return make_agent("lab-agent", ["lab-check:adjust"])


def _commit(persona, snapshot: dict[str, Any], key: str):
    return persona.post(
        "/api/v1/effects",
        {"snapshot_id": snapshot["snapshot_id"], "action": "adjust", "resulting_value": 2},
        HTTP_IDEMPOTENCY_KEY=key,
        HTTP_IF_MATCH=f'"{snapshot["fields"]["level"]["version"]}"',
    )


def test_a_retry_that_read_another_deciding_value_is_not_approved(flagged, reviewer):
    """The reviewer approved with the flag `minor` on the page; the flag became `critical`
    while the question was open (the same rule, the same code: the retry joined). The level,
    the field the action writes, never moved — the approval must still not cover it."""
    first = lab_reconcile(flagged)
    assert (first["decision"]["result"], first["fields"]["flag"]["value"]) == (
        "escalate",
        "minor",
    )
    SandboxRecordFactory(source="lab-service", subject="sample-1", field="flag", value="critical")
    retry = lab_reconcile(flagged)
    assert retry["escalation_id"] == first["escalation_id"]
    assert retry["fields"]["level"]["version"] == first["fields"]["level"]["version"]

    approved = reviewer.post(
        f"/api/v1/escalations/{first['escalation_id']}/approve",
        {"rationale": "a minor flag: adjust"},
    )
    assert approved.status_code == 200, approved.content

    shown = flagged.get(f"/api/v1/snapshots/{retry['snapshot_id']}").json()
    assert shown["actions"] == {}
    response = _commit(flagged, retry, "k-joined-critical")
    assert (response.status_code, response.json()["code"]) == (403, "approved_state_moved")
    assert response.json()["field"] == "flag"
    assert not Effect.objects.exists()

    # What the reviewer saw is still authorised.
    assert list(flagged.get(f"/api/v1/snapshots/{first['snapshot_id']}").json()["actions"]) == [
        "adjust"
    ]
    assert _commit(flagged, first, "k-approved").status_code == 201


def test_a_retry_that_read_the_same_values_is_approved(flagged, reviewer):
    """The flag written again with the value the reviewer saw: the same state for policy."""
    first = lab_reconcile(flagged)
    SandboxRecordFactory(source="lab-service", subject="sample-1", field="flag", value="minor")
    retry = lab_reconcile(flagged)
    assert retry["escalation_id"] == first["escalation_id"]
    reviewer.post(
        f"/api/v1/escalations/{first['escalation_id']}/approve", {"rationale": "minor: adjust"}
    )
    assert list(flagged.get(f"/api/v1/snapshots/{retry['snapshot_id']}").json()["actions"]) == [
        "adjust"
    ]
    assert _commit(flagged, retry, "k-joined-same").status_code == 201
