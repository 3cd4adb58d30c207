"""A quarantine with an end stops holding at that end, not at the next sweep after it: the
gate, memory writes and a new quarantine of the same target all judge `ends_at` themselves
(services/quarantine.in_force). The sweep, a minute later at most, records the lift. Before,
for up to that minute, commits answered 423 `Retry-After: 1` and writes 423."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from reconcile_app.models import AuditEvent, Quarantine
from reconcile_app.services.quarantine import quarantines_expire
from tests.reconcile_app.api.test_recall import remember
from tests.reconcile_app.effects.conftest import collectible, commit, reconcile  # noqa: F401

ENDS_IN = timedelta(minutes=5)


@pytest.fixture
def clock(monkeypatch):
    """Moves the whole product's clock (everything reads `timezone.now()`) ahead."""
    real_now = timezone.now

    def ahead(delta: timedelta) -> datetime:
        monkeypatch.setattr(timezone, "now", lambda: real_now() + delta)
        return real_now() + delta

    return ahead


def quarantine(operator, scope: str, target: str) -> dict:
    response = operator.post(
        "/api/v1/quarantines",
        {
            "scope": scope,
            "target": target,
            "reason": "until the replica catches up",
            "ends_at": (timezone.now() + ENDS_IN).isoformat(),
        },
    )
    assert response.status_code == 202, response.content
    return response.json()


def test_a_source_quarantine_stops_holding_commits_at_its_end(collectible, agent, operator, clock):
    snapshot = reconcile(agent)  # the gate's caches are warm: the quarantine set is cached
    placed = quarantine(operator, "source", "case-service")
    held = commit(agent, snapshot, "release_collections_hold", "released", "k-end-1")
    assert held.status_code == 423 and held.json()["code"] == "source_quarantined"

    clock(ENDS_IN + timedelta(seconds=1))  # no sweep has run
    fresh = reconcile(agent)
    assert fresh["fields"]["collections_status"]["status"] == "ok"
    assert fresh["decision"]["result"] == "allow"
    response = commit(agent, fresh, "release_collections_hold", "released", "k-end-2")
    assert response.status_code == 201, response.content

    assert Quarantine.objects.get(quarantine_id=placed["id"]).status != "lifted"
    assert quarantines_expire() == 1, "the sweep still records the lift"


def test_a_memory_class_quarantine_stops_refusing_writes_at_its_end(
    collectible, agent, operator, clock
):
    quarantine(operator, "memory_class", "episodic")
    refused = agent.post(
        "/api/v1/memories",
        {
            "memory_class": "episodic",
            "subject": "account-17",
            "purpose": "collections",
            "field": "collections_status",
            "value": "collect",
            "derived_from": ["ev-collect"],
            "written_at": "2026-08-30T09:00:00Z",
        },
    )
    assert refused.status_code == 423 and refused.json()["code"] == "memory_class_quarantined"

    clock(ENDS_IN + timedelta(seconds=1))
    assert remember(agent)["memory_class"] == "episodic"


def test_a_target_whose_quarantine_has_ended_can_be_quarantined_again(collectible, operator, clock):
    ended = quarantine(operator, "source", "case-service")
    clock(ENDS_IN + timedelta(seconds=1))

    again = quarantine(operator, "source", "case-service")

    assert Quarantine.objects.get(quarantine_id=ended["id"]).status == "lifted"
    assert Quarantine.objects.get(quarantine_id=again["id"]).status != "lifted"
    lift = AuditEvent.objects.get(action="quarantine.lift", object_ref=ended["id"])
    assert (lift.actor_name, lift.reason) == ("system", "ended at its scheduled end time")


def test_the_lift_at_its_end_names_who_chose_it_and_carries_their_request_id(
    collectible, operator, clock
):
    # The system carries out a person's choice: filtering the audit by that person, or by the
    # request that set the end, must find the lift. It was `system` on the sweep's task id.
    placed = quarantine(operator, "source", "case-service")
    create = AuditEvent.objects.get(action="quarantine.create", object_ref=placed["id"])
    assert operator.get("/api/v1/me").status_code == 200  # another request ran since

    clock(ENDS_IN + timedelta(seconds=1))
    assert quarantines_expire() == 1

    lift = AuditEvent.objects.get(action="quarantine.lift", object_ref=placed["id"])
    assert (lift.actor_name, lift.reason) == ("system", "ended at its scheduled end time")
    assert lift.after["on_behalf_of"] == create.actor_name == placed["created_by"]
    assert create.request_id and lift.request_id == create.request_id
