"""An effect recorded whose request ended before the command left (the database refused the
next write, a disk full say, or its process died) is never stuck `recorded`: the sweep settles
it `rejected` `not_sent`, and a retry with its key sends it, through the gate again.

Until then such an effect stayed `recorded` for good, and every retry with its key answered
409 `idempotency_key_in_use`: the agent could neither act under its key nor learn that nothing
had been sent.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import OperationalError
from django.utils import timezone

from reconcile_app.choices import EffectStatus
from reconcile_app.models import Effect
from reconcile_app.services.effects import commit as commit_service
from reconcile_app.services.effects import effects_sweep
from sandbox_app.models import SandboxRecord
from tests.reconcile_app.effects.conftest import SUBJECT, collectible, commit, reconcile  # noqa: F401


def owner_version() -> int:
    return SandboxRecord.objects.get(
        source="case-service", subject=SUBJECT, field="collections_status"
    ).version


@pytest.mark.django_db(transaction=True)
def test_a_commit_the_database_stopped_before_sending_is_sent_by_its_retry(
    agent, collectible, monkeypatch
):
    snapshot = reconcile(agent)
    version_before = owner_version()

    def disk_full(effect: Effect) -> bool:
        raise OperationalError("database or disk is full")

    monkeypatch.setattr(commit_service, "effect_mark_sent", disk_full)
    first = commit(agent, snapshot, "release_collections_hold", "released", "k-unsent-1")
    monkeypatch.undo()
    assert (first.status_code, first.json()["code"]) == (503, "database_unavailable")
    effect = Effect.objects.get(idempotency_key="k-unsent-1")
    assert effect.status == EffectStatus.RECORDED and owner_version() == version_before

    # Moments later it may still be on its way: the retry waits.
    again = commit(agent, snapshot, "release_collections_hold", "released", "k-unsent-1")
    assert (again.status_code, again.json()["code"]) == (409, "idempotency_key_in_use")

    counts = effects_sweep(now=timezone.now() + timedelta(seconds=61))
    assert counts["recorded_to_not_sent"] == 1
    effect.refresh_from_db()
    assert (effect.status, effect.outcome["code"]) == (EffectStatus.REJECTED, "not_sent")
    assert list(effect.events.order_by("pk").values_list("kind", flat=True)) == [
        "recorded",
        "rejected",
    ]

    retried = commit(agent, snapshot, "release_collections_hold", "released", "k-unsent-1")
    assert retried.status_code == 201, retried.content
    assert retried.json()["status"] == EffectStatus.ACCEPTED
    assert owner_version() == version_before + 1  # sent once
    assert [kind for kind in effect.events.order_by("pk").values_list("kind", flat=True)][:4] == [
        "recorded",
        "rejected",
        "retried",
        "sent",
    ]


@pytest.mark.django_db(transaction=True)
def test_a_sender_whose_effect_was_settled_meanwhile_sends_nothing(agent, collectible, monkeypatch):
    snapshot = reconcile(agent)
    version_before = owner_version()
    original = commit_service._send

    def settled_first(effect: Effect) -> Effect:
        # The sweep settles it between the record and the send (the sender was stalled).
        effects_sweep(now=timezone.now() + timedelta(seconds=61))
        return original(effect)

    monkeypatch.setattr(commit_service, "_send", settled_first)
    response = commit(agent, snapshot, "release_collections_hold", "released", "k-unsent-2")

    assert (response.status_code, response.json()["code"]) == (503, "not_sent")
    assert response["Retry-After"]
    assert owner_version() == version_before
    assert Effect.objects.get(idempotency_key="k-unsent-2").status == EffectStatus.REJECTED


@pytest.mark.django_db(transaction=True)
def test_a_commit_the_database_fails_after_the_owner_took_it_says_so(
    agent, collectible, monkeypatch
):
    # Live (soak with the var directory filled): one commit answered 503 "nothing was
    # written", and the sweep then found it executed and verified it.
    snapshot = reconcile(agent)

    def disk_full(**kwargs: object) -> Effect:
        raise OperationalError("database or disk is full")

    monkeypatch.setattr(commit_service, "effect_accept", disk_full)
    response = commit(agent, snapshot, "release_collections_hold", "released", "k-unsent-3")
    monkeypatch.undo()

    assert response.status_code == 503, response.content
    assert response["Retry-After"] == "5"
    problem = response.json()
    assert problem["code"] == "database_unavailable"
    assert problem["idempotency_key"] == "k-unsent-3"
    assert "nothing was written" not in problem["detail"]
    assert "same Idempotency-Key" in problem["detail"]
    assert Effect.objects.get(idempotency_key="k-unsent-3").status == EffectStatus.SENT


def test_a_retry_sent_again_that_the_database_fails_says_it_was_recorded(
    agent, collectible, monkeypatch
):
    """After 503 owner_unavailable the same key is sent again: `rejected → recorded` is
    committed before the send, so a database failure then has written something too."""
    from sandbox_app.services import sandbox_fault_add

    snapshot = reconcile(agent)
    sandbox_fault_add(source="case-service", kind="unavailable", count=1)
    first = commit(agent, snapshot, "release_collections_hold", "released", "k-unsent-4")
    assert (first.status_code, first.json()["code"]) == (503, "owner_unavailable")

    def disk_full(effect: Effect) -> bool:
        raise OperationalError("database or disk is full")

    monkeypatch.setattr(commit_service, "effect_mark_sent", disk_full)
    again = commit(agent, snapshot, "release_collections_hold", "released", "k-unsent-4")
    monkeypatch.undo()

    assert again.status_code == 503, again.content
    problem = again.json()
    assert (problem["code"], problem["idempotency_key"]) == ("database_unavailable", "k-unsent-4")
    assert "nothing was written" not in problem["detail"]
    assert Effect.objects.get(idempotency_key="k-unsent-4").status == EffectStatus.RECORDED
