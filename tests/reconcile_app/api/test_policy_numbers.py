"""Policy sees numbers as the snapshot hashes them: 1.0 is 1.

PostgreSQL's jsonb gives an integral number back as an integer (1.0 → 1), SQLite's JSON text
gives it back as written, and the snapshot's hash covers the normalised value either way.
CEL does not mix doubles and ints (`1.0 + 1` is an error, which fails closed), so a decision
that saw the value as the request or the owner spelled it was not a function of the content
it was hashed with: an owner's 1.0 decided otherwise than its 1, and a replay on PostgreSQL
(reading the stored 1) decided differently from the reconcile (which saw 1.0).
"""

from __future__ import annotations

import pytest

from tests.factories import SandboxRecordFactory
from tests.reconcile_app.api.test_reconcile_policy import (  # noqa: F401
    lab_agent,
    lab_forced_live,
)

ALLOW_WHEN_EFFECT_IS_ONE = "  allow: [{when: 'effect.value + 1 == 2', permits: [adjust]}]"
ALLOW_WHEN_LEVEL_IS_ONE = "  allow: [{when: 'fields.level + 1 == 2', permits: [adjust]}]"


def _reconcile(persona, **extra):
    response = persona.post(
        "/api/v1/reconcile",
        {
            "subject": "sample-1",
            "purpose": "testing",
            "decision_class": "lab-check",
            "proposed_action": "adjust",
            **extra,
        },
    )
    assert response.status_code == 201, response.content
    return response.json()


@pytest.mark.parametrize("proposed", [1, 1.0])
def test_a_proposed_value_decides_and_replays_the_same_however_it_is_spelled(
    db, tmp_path, lab_agent, proposed
):
    lab_forced_live(tmp_path, ALLOW_WHEN_EFFECT_IS_ONE)
    SandboxRecordFactory(source="lab-service", subject="sample-1", field="level", value=3)
    SandboxRecordFactory(source="lab-service", subject="sample-1", field="flag", value="x")

    snapshot = _reconcile(lab_agent, proposed_value=proposed)

    assert snapshot["decision"]["result"] == "allow"
    replayed = lab_agent.post(
        f"/api/v1/snapshots/{snapshot['snapshot_id']}/replay", {"mode": "as_recorded"}
    ).json()
    assert replayed["exact"] is True, replayed["differences"]


@pytest.mark.parametrize("level", [1, 1.0])
def test_an_owner_value_decides_the_same_on_every_database(db, tmp_path, lab_agent, level):
    lab_forced_live(tmp_path, ALLOW_WHEN_LEVEL_IS_ONE)
    SandboxRecordFactory(source="lab-service", subject="sample-1", field="level", value=level)
    SandboxRecordFactory(source="lab-service", subject="sample-1", field="flag", value="x")

    snapshot = _reconcile(lab_agent)

    assert snapshot["decision"]["result"] == "allow"
