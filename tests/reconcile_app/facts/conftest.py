"""Fixtures for facts by rule: the eval registry of seed 001 as a sandbox owner."""

from __future__ import annotations

import pytest

from reconcile_app.services.evidence import evidence_append
from sandbox_app.services import sandbox_authority_write
from tests.conftest import ago

REGISTRY = "eval-registry"


@pytest.fixture
def registry(estate):
    evidence_append(
        kind="observation",
        subject="math-eval",
        field="baseline",
        value="ckpt-0519",
        source=REGISTRY,
        observed_at=ago(days=60),
        evidence_id="ev-registry-r18",
    )


def authority(fact_key: str, revision: str = "registry@r18", owner: str = REGISTRY) -> None:
    sandbox_authority_write(
        source=REGISTRY, fact_key=fact_key, owner=owner, source_revision=revision
    )


def remember(agent, fact_key: str, memory_id: str, value: str, revision: str, **extra):
    body = {
        "memory_id": memory_id,
        "memory_class": "operational",
        "subject": "math-eval",
        "purpose": "nightly-eval-summary",
        "fact_key": fact_key,
        "value": value,
        "owner": REGISTRY,
        "source_revision": revision,
        "derived_from": ["ev-registry-r18"],
        **extra,
    }
    response = agent.post("/api/v1/memories", body)
    assert response.status_code == 201, response.content
    return response.json()


def current(persona, fact_key: str, on: str = "2026-09-30"):
    return persona.client.get(f"/api/v1/facts/{fact_key}/current", {"on": on})
