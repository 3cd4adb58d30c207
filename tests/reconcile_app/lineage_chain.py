"""A lineage chain made through reconcile's protocol, for the pages that show lineage (the
explorer, blast radius, corrections, evidence, replay) and the lineage and corrections APIs.

`chain`: ev-collect (the owner's ledger entry) → snapshot → decision → effect l-1 → receipt
and readback; a memory derived from the snapshot (no fact key), and a fact memory derived
from ev-collect (fact key `collections.account-17`). `correction`: an operator's correction of
ev-collect. `chain_with_memory`: the snapshot, effect and a memory only (for the APIs).

Test modules import the fixtures they use (with `collectible`, which `chain` needs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from reconcile_app.models import Correction
from reconcile_app.services.corrections import correction_create
from tests.conftest import Persona
from tests.reconcile_app.effects.conftest import (  # noqa: F401 (a fixture and helpers)
    SUBJECT,
    collectible,
    commit,
    reconcile,
)

FACT_KEY = "collections.account-17"


@dataclass
class Chain:
    snapshot_id: str
    decision_id: str
    effect_key: str
    memory_id: str
    fact_memory_id: str


def build_chain(agent: Persona, key: str = "l-1", capture: Any = None) -> Chain:
    snapshot = reconcile(agent)
    assert snapshot["decision"]["result"] == "allow"
    with capture(execute=True):
        response = commit(agent, snapshot, "release_collections_hold", "released", key)
        assert response.status_code == 201, response.content
    memory = agent.post(
        "/api/v1/memories",
        {
            "memory_class": "episodic",
            "subject": SUBJECT,
            "purpose": "collections",
            "field": "collections_status",
            "value": "released",
            "derived_from": [f"snapshot:{snapshot['snapshot_id']}"],
        },
    )
    assert memory.status_code == 201, memory.content
    fact = agent.post(
        "/api/v1/memories",
        {
            "memory_class": "operational",
            "subject": SUBJECT,
            "purpose": "collections",
            "field": "collections_status",
            "fact_key": FACT_KEY,
            "value": "collect",
            "owner": "case-service",
            "source_revision": "case-service@42",
            "valid_until": "2099-12-31",
            "derived_from": ["ev-collect"],
        },
    )
    assert fact.status_code == 201, fact.content
    return Chain(
        snapshot_id=snapshot["snapshot_id"],
        decision_id=snapshot["snapshot_id"].replace("snap_", "dec_"),
        effect_key=key,
        memory_id=memory.json()["memory_id"],
        fact_memory_id=fact.json()["memory_id"],
    )


@pytest.fixture
def chain(collectible, agent, eager_tasks, django_capture_on_commit_callbacks) -> Chain:
    return build_chain(agent, capture=django_capture_on_commit_callbacks)


@pytest.fixture
def correction(chain: Chain, operator: Persona) -> Correction:
    return correction_create(
        evidence_id="ev-collect",
        reason="Keyed to the wrong account",
        actor=operator.user,
        request_id="test",
    )


def chain_with_memory(agent: Persona, capture: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """ev-collect → snapshot → decision → effect → receipt/readback, and a memory from it."""
    snapshot = reconcile(agent)
    with capture(execute=True):
        assert (
            commit(agent, snapshot, "release_collections_hold", "released", "l-1").status_code
            == 201
        )
    memory = memory_from(agent, snapshot["snapshot_id"]).json()
    return snapshot, memory


def memory_from(agent: Persona, snapshot_id: str) -> Any:
    """An episodic memory of account-17's released hold, derived from the snapshot."""
    return agent.post(
        "/api/v1/memories",
        {
            "memory_class": "episodic",
            "subject": "account-17",
            "purpose": "collections",
            "field": "collections_status",
            "value": "released",
            "derived_from": [f"snapshot:{snapshot_id}"],
        },
    )
