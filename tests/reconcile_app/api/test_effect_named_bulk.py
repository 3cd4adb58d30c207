"""An effect whose Idempotency-Key is "bulk" stays readable where every effect is: the bulk
endpoint shares its path (`POST /effects/bulk`), not its key space."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_app.models import BulkJob, Effect
from tests.reconcile_app.console.conftest import commit_effect


@pytest.fixture
def named_bulk(estate: Any, agent: Any) -> Effect:
    effect = commit_effect(agent, "bulk")
    assert effect.idempotency_key == "bulk"
    return effect


def test_get_effects_bulk_answers_as_the_effects_own_read_does(named_bulk, agent, operator):
    mine = agent.get("/api/v1/effects/bulk")
    assert mine.status_code == 200, mine.content
    assert mine.json()["idempotency_key"] == "bulk"
    assert mine.json()["status"] == named_bulk.status
    # Byte for byte what the read of any other key would give, for its owner and for people.
    assert operator.get("/api/v1/effects/bulk").json() == mine.json()
    assert mine.json() == agent.get(f"/api/v1/effects/{named_bulk.idempotency_key}").json()


def test_another_agent_does_not_see_it_and_no_effect_is_a_404(named_bulk, outsider):
    response = outsider.get("/api/v1/effects/bulk")
    assert response.status_code == 404
    assert response.json()["code"] == "effect_not_found"


def test_without_such_an_effect_get_is_effect_not_found(estate, operator):
    response = operator.get("/api/v1/effects/bulk")
    assert (response.status_code, response.json()["code"]) == (404, "effect_not_found")


def test_the_bulk_endpoint_still_takes_the_effect_named_bulk(named_bulk, operator):
    response = operator.post(
        "/api/v1/effects/bulk", {"keys": ["bulk"], "action": "readback", "reason": "check"}
    )
    assert response.status_code == 202, response.content
    assert BulkJob.objects.get().items.get().ref == "bulk"


def test_agents_still_cannot_post_a_bulk_job(named_bulk, agent):
    response = agent.post(
        "/api/v1/effects/bulk", {"keys": ["bulk"], "action": "readback", "reason": "check"}
    )
    assert (response.status_code, response.json()["code"]) == (403, "people_only")
