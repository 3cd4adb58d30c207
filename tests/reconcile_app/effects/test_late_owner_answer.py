"""The owner's answer arrives after the sweep gave its sender up (found by the stateful model,
test_lifecycle_stateful.py): the sender stalled past the sweep's grace with the answer in
hand, and the sweep moved the effect sent → unknown meanwhile (a worker may then have
settled it). The late answer must not write a transition that did not happen: the timeline
is the effect's status history."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any
from unittest.mock import patch

import pytest
from django.utils import timezone

from reconcile_app.choices import EffectStatus
from reconcile_app.models import Effect, EffectEvent, EvidenceEntry
from reconcile_app.services.effects.resolution import effect_resolve_unknown
from reconcile_app.services.effects.sweep import effects_sweep
from sandbox_app import adapter
from sandbox_app.services import sandbox_fault_add
from tests.reconcile_app.effects.conftest import commit, reconcile

pytestmark = pytest.mark.usefixtures("collectible")


@contextmanager
def sender_stalls_after_the_answer(meanwhile: Callable[[], None]) -> Iterator[None]:
    """The owner answers; before the sender records it, the sweep runs a minute on."""
    real = adapter.sandbox_effect_apply

    def apply(**kwargs: Any) -> Any:
        try:
            return real(**kwargs)
        finally:
            effects_sweep(now=timezone.now() + timedelta(seconds=61))
            meanwhile()

    with patch.object(adapter, "sandbox_effect_apply", apply):
        yield


def timeline(key: str) -> list[str]:
    return list(
        EffectEvent.objects.filter(effect__idempotency_key=key)
        .order_by("id")
        .values_list("kind", flat=True)
    )


def test_a_late_refusal_writes_no_rejection_the_effect_never_made(
    agent, django_capture_on_commit_callbacks
):
    snapshot = reconcile(agent)
    with django_capture_on_commit_callbacks(execute=False):
        first = commit(agent, snapshot, "release_collections_hold", "released", "first")
    assert first.status_code == 201, first.content
    # The same snapshot, still in its window, at the version it read (now stale at the owner).
    with (
        django_capture_on_commit_callbacks(execute=False),
        sender_stalls_after_the_answer(lambda: None),
    ):
        late = commit(agent, snapshot, "release_collections_hold", "released", "second")

    effect = Effect.objects.get(idempotency_key="second")
    assert effect.status == EffectStatus.UNKNOWN, late.content
    assert effect.outcome["code"] == "sender_lost"
    # Was: recorded, sent, timeout, rejected — a rejection of an effect that stayed unknown.
    assert timeline("second") == ["recorded", "sent", "timeout"]


def test_a_late_timeout_writes_no_timeout_after_the_owner_ledger_settled_it(
    agent, django_capture_on_commit_callbacks
):
    snapshot = reconcile(agent)
    sandbox_fault_add(source="case-service", kind="timeout_after_commit", count=1)

    def worker_resolves() -> None:
        effect_resolve_unknown(effect_id=Effect.objects.get(idempotency_key="lost").pk)

    with (
        django_capture_on_commit_callbacks(execute=False),
        sender_stalls_after_the_answer(worker_resolves),
    ):
        response = commit(agent, snapshot, "release_collections_hold", "released", "lost")

    effect = Effect.objects.get(idempotency_key="lost")
    # The owner's ledger had the receipt: accepted, and the late "no answer" changes nothing.
    assert effect.status == EffectStatus.ACCEPTED, response.content
    assert response.json()["status"] == "accepted"
    # Was: ..., resolution, timeout — the timeline said unknown while the row said accepted,
    # and the ledger had a second "request sent; response not received" for the key.
    assert timeline("lost") == ["recorded", "sent", "timeout", "resolution"]
    unanswered = EvidenceEntry.objects.filter(kind="tool_request", value__idempotency_key="lost")
    assert unanswered.count() == 1
