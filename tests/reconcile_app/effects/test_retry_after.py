"""Retrying where it helps: `Retry-After` on the answers a later retry can change, and a key
whose request never reached the owner (503 `owner_unavailable`) sent again, not replayed."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from reconcile_app.choices import EffectStatus
from reconcile_app.models import Effect
from reconcile_app.services.effects import IN_FLIGHT_RETRY_AFTER_SECONDS, OWNER_RETRY_AFTER_SECONDS
from reconcile_app.services.quarantine import quarantine_apply, quarantine_create
from sandbox_app.services import sandbox_fault_add
from tests.reconcile_app.effects.conftest import commit, reconcile

ACTION, VALUE = "release_collections_hold", "released"


@pytest.fixture
def allowed(collectible, agent):
    return reconcile(agent)


def test_owner_unavailable_says_when_to_retry(allowed, agent):
    sandbox_fault_add(source="case-service", kind="unavailable", count=1)
    response = commit(agent, allowed, ACTION, VALUE, "k-down")
    assert (response.status_code, response.json()["code"]) == (503, "owner_unavailable")
    assert response["Retry-After"] == str(OWNER_RETRY_AFTER_SECONDS)
    assert "Idempotent-Replayed" not in response


def test_the_same_key_after_owner_unavailable_is_sent_again(
    allowed, agent, eager_tasks, django_capture_on_commit_callbacks
):
    sandbox_fault_add(source="case-service", kind="unavailable", count=1)
    assert commit(agent, allowed, ACTION, VALUE, "k-again").status_code == 503
    with django_capture_on_commit_callbacks(execute=True):
        retry = commit(agent, allowed, ACTION, VALUE, "k-again")
    assert retry.status_code == 201
    assert "Idempotent-Replayed" not in retry
    assert retry.json()["status"] == EffectStatus.ACCEPTED
    effect = Effect.objects.get(idempotency_key="k-again")
    kinds = list(effect.events.order_by("at", "id").values_list("kind", flat=True))
    assert kinds[:5] == ["recorded", "sent", "rejected", "retried", "sent"]
    # And from then on, the key answers from the record like any other.
    replay = commit(agent, allowed, ACTION, VALUE, "k-again")
    assert (replay.status_code, replay["Idempotent-Replayed"]) == (200, "true")


def test_a_retry_after_owner_unavailable_passes_the_gate_again(allowed, agent, monkeypatch):
    sandbox_fault_add(source="case-service", kind="unavailable", count=1)
    assert commit(agent, allowed, ACTION, VALUE, "k-late").status_code == 503
    later = timezone.now() + timedelta(seconds=121)
    monkeypatch.setattr(timezone, "now", lambda: later)
    response = commit(agent, allowed, ACTION, VALUE, "k-late")
    assert (response.status_code, response.json()["code"]) == (412, "snapshot_expired")
    assert Effect.objects.get(idempotency_key="k-late").status == EffectStatus.REJECTED


def test_other_rejections_still_replay(allowed, agent):
    from sandbox_app.services import sandbox_record_write

    sandbox_record_write(
        source="case-service", subject=allowed["subject"], field="collections_status", value="x"
    )
    first = commit(agent, allowed, ACTION, VALUE, "k-moved")
    assert (first.status_code, first.json()["code"]) == (412, "version_changed")
    again = commit(agent, allowed, ACTION, VALUE, "k-moved")
    assert (again.status_code, again["Idempotent-Replayed"]) == (412, "true")
    assert "Retry-After" not in again


def test_a_key_in_flight_says_when_to_retry(allowed, agent):
    commit(agent, allowed, ACTION, VALUE, "k-busy")
    Effect.objects.filter(idempotency_key="k-busy").update(status=EffectStatus.SENT)
    response = commit(agent, allowed, ACTION, VALUE, "k-busy")
    assert (response.status_code, response.json()["code"]) == (409, "idempotency_key_in_use")
    assert response["Retry-After"] == str(IN_FLIGHT_RETRY_AFTER_SECONDS)


def test_a_quarantine_with_an_end_says_when_to_retry(allowed, agent, operator):
    ends_at = timezone.now() + timedelta(minutes=10)
    quarantine = quarantine_create(
        scope="source", target="case-service", reason="drill", actor=operator.user, ends_at=ends_at
    )
    quarantine_apply(quarantine_id=quarantine.quarantine_id)
    response = commit(agent, allowed, ACTION, VALUE, "k-held")
    assert (response.status_code, response.json()["code"]) == (423, "source_quarantined")
    assert 590 <= int(response["Retry-After"]) <= 600
    assert response.json()["ends_at"] is not None


def test_a_quarantine_without_an_end_gives_no_time(allowed, agent, operator):
    quarantine = quarantine_create(
        scope="source", target="case-service", reason="drill", actor=operator.user
    )
    quarantine_apply(quarantine_id=quarantine.quarantine_id)
    response = commit(agent, allowed, ACTION, VALUE, "k-held")
    assert response.status_code == 423
    assert "Retry-After" not in response
    assert response.json()["ends_at"] is None


def test_the_sandbox_owner_says_when_to_retry_too(estate, operator):
    sandbox_fault_add(source="case-service", kind="unavailable", count=1)
    response = operator.client.get("/api/v1/sandbox/case-service/records/account-17/field")
    assert (response.status_code, response.json()["code"]) == (503, "owner_unavailable")
    assert int(response["Retry-After"]) > 0
