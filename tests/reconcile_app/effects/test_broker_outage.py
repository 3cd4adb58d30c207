"""The broker refuses a task after the change is committed: the answer stands, the failure is
logged, and a sweep queues the work again (reconcile_app/services/enqueue.py).

An effect accepted by its owner is on record (`accepted`, with `next_check_at`) before its
readback is queued; the answer was a 500 `internal_error` when Redis refused the message, as
if nothing had happened, though the owner had executed the command.
"""

from __future__ import annotations

import errno
import logging
import os
from datetime import timedelta

import pytest
from celery.app.task import Task
from django.conf import settings
from kombu.exceptions import OperationalError

from config import broker
from reconcile_app.choices import EffectStatus
from reconcile_app.models import AuditEvent, Effect, EffectEvent
from reconcile_app.services.effects import effects_sweep
from tests.fresh_interpreter import fresh_python
from tests.listeners import silent_listener
from tests.reconcile_app.effects.conftest import commit, reconcile, released


@pytest.fixture
def broker_refuses(monkeypatch):
    """Every publish fails as Celery's does when Redis refuses the connection."""
    sent: list[str] = []

    def refused(task: Task, *args, **kwargs):
        sent.append(task.name)
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(Task, "apply_async", refused)
    return sent


@pytest.mark.django_db(transaction=True)
def test_an_accepted_effect_is_answered_when_its_readback_cannot_be_queued(
    agent, collectible, broker_refuses, monkeypatch, caplog, eager_tasks
):
    snapshot = reconcile(agent)
    with caplog.at_level(logging.ERROR, logger="reconcile_app.services.enqueue"):
        response = commit(agent, snapshot, "release_collections_hold", "released", "k-broker-1")

    assert response.status_code == 201, response.content
    assert response.json()["status"] == EffectStatus.ACCEPTED
    assert broker_refuses == ["reconcile_app.tasks.effect_readback_task"]
    effect = Effect.objects.get(idempotency_key="k-broker-1")
    assert effect.status == EffectStatus.ACCEPTED and effect.next_check_at is not None
    [logged] = [r for r in caplog.records if r.name == "reconcile_app.services.enqueue"]
    assert "effect_readback_task" in logged.getMessage() and "sweep" in logged.getMessage()

    # The broker is back: the sweep queues the readback, which concludes the effect.
    monkeypatch.undo()
    effects_sweep(now=effect.next_check_at + timedelta(seconds=1))
    effect.refresh_from_db()
    assert effect.status == EffectStatus.VERIFIED


def test_a_redis_broker_that_never_answers_fails_a_publish_in_seconds(tmp_path):
    # The settings' own transport options, read as a server process reads them.
    with silent_listener() as port:
        env = {
            **os.environ,
            "CELERY_BROKER_URL": f"redis://127.0.0.1:{port}/0",
            "RECONCILE_VAR_DIR": str(tmp_path),
        }
        env.pop("DATABASE_URL", None)
        out = fresh_python(
            "import time, django; django.setup()\n"
            "from kombu.exceptions import OperationalError\n"
            "from reconcile_app.tasks import effect_readback_task\n"
            "started = time.monotonic()\n"
            "try:\n"
            "    effect_readback_task.delay(1)\n"
            "except OperationalError as exc:\n"
            "    print('refused', type(exc).__name__, round(time.monotonic() - started))\n",
            env=env,
        )
    word, kind, seconds = out.split()
    assert (word, kind) == ("refused", "OperationalError")
    assert int(seconds) <= 25  # socket timeouts of 5 s, four attempts (Celery's retry policy)


def test_a_check_the_broker_refuses_is_a_503_that_records_nothing(
    agent, operator, collectible, django_capture_on_commit_callbacks, broker_refuses
):
    effect = released(agent, django_capture_on_commit_callbacks, "k-broker-2")
    events_before = EffectEvent.objects.filter(effect=effect).count()

    response = operator.post(f"/api/v1/effects/{effect.idempotency_key}/readback", {})

    assert response.status_code == 503, response.content
    assert response["Retry-After"] == "5"
    assert response.json()["code"] == "broker_unavailable"
    # Queuing was the whole request: nothing says it was queued.
    assert EffectEvent.objects.filter(effect=effect).count() == events_before
    assert not AuditEvent.objects.filter(action="effect.readback").exists()


@pytest.mark.skipif(
    not settings.CELERY_BROKER_URL.startswith("filesystem://"), reason="the embedded broker"
)
@pytest.mark.django_db(transaction=True)
def test_the_embedded_brokers_folder_refusing_a_message_leaves_the_answer_alone(
    agent, collectible, monkeypatch
):
    def disk_full(source: str, target: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    snapshot = reconcile(agent)
    monkeypatch.setattr(broker.os, "replace", disk_full)
    response = commit(agent, snapshot, "release_collections_hold", "released", "k-broker-3")

    assert response.status_code == 201, response.content
    effect = Effect.objects.get(idempotency_key="k-broker-3")
    assert effect.status == EffectStatus.ACCEPTED and effect.next_check_at is not None
