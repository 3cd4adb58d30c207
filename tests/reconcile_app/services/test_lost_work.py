"""One-shot work outlives a lost task: the sweep queues again a quarantine still applying,
once it has waited longer than its task takes, and not again for a while."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.core.cache import cache

from reconcile_app.choices import QuarantineStatus
from reconcile_app.models import Quarantine
from reconcile_app.services.lost_work import REQUEUE_EVERY, lost_work_sweep
from reconcile_app.services.quarantine import quarantine_create


@pytest.fixture
def queued(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, list[str]]]:
    """What the sweep sends to the broker, by task (instead of running it)."""
    from reconcile_app import tasks

    sent: dict[str, list[str]] = {"quarantines": [], "corrections": [], "activations": []}
    monkeypatch.setattr(tasks.quarantine_apply_task, "delay", sent["quarantines"].append)
    monkeypatch.setattr(tasks.correction_complete_task, "delay", sent["corrections"].append)
    monkeypatch.setattr(tasks.contract_activation_task, "delay", sent["activations"].append)
    cache.clear()
    yield sent
    cache.clear()


@pytest.fixture
def applying(estate: Any, operator: Any) -> Quarantine:
    """A quarantine whose apply task never ran (the test's transaction never commits)."""
    quarantine = quarantine_create(
        scope="source", target="case-service", reason="outage", actor=operator.user
    )
    assert quarantine.status == QuarantineStatus.APPLYING
    return quarantine


def test_a_quarantine_left_applying_is_queued_again_once(applying, queued):
    created = applying.created_at
    # Younger than its grace: its task may simply still be running.
    assert lost_work_sweep(now=created + timedelta(seconds=30))["quarantines"] == 0
    later = created + timedelta(minutes=3)
    assert lost_work_sweep(now=later)["quarantines"] == 1
    assert queued["quarantines"] == [applying.quarantine_id]
    # The next sweeps leave it alone for a while: one copy on the queue, not one a minute.
    assert lost_work_sweep(now=later + timedelta(minutes=1))["quarantines"] == 0
    assert queued["quarantines"] == [applying.quarantine_id]


def test_the_queued_task_applies_it_and_the_sweep_then_has_nothing(applying, queued):
    from reconcile_app.tasks import quarantine_apply_task

    lost_work_sweep(now=applying.created_at + timedelta(minutes=3))
    [quarantine_id] = queued["quarantines"]
    assert quarantine_apply_task.run(quarantine_id) == QuarantineStatus.APPLIED
    cache.clear()
    later = applying.created_at + timedelta(minutes=3) + REQUEUE_EVERY
    assert lost_work_sweep(now=later) == {"quarantines": 0, "corrections": 0, "activations": 0}
