"""Readbacks and resolutions run under a time limit of their own, far below the default's.

Their timers are what a worker's main process keeps on Redis until each would have fired
(docs/deploy.md, "Workers"), so their limit bounds that memory. A task carries its limits in
the message that queues it; this queues a readback limited to 2 s, against an owner that
answers in 8, to a real worker: the readback is cut short, the effect is neither lost nor
falsely verified, and once the owner answers in time it is verified.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone

from reconcile_app.choices import EffectStatus
from reconcile_app.models import Effect
from reconcile_app.services.effects import effects_sweep
from reconcile_app.tasks import effect_readback_task, effect_resolve_task, memories_expire_task
from sandbox_app.services import sandbox_fault_add, sandbox_faults_clear
from tests.reconcile_app.effects.celery_workers import Worker, wait_for
from tests.reconcile_app.effects.conftest import commit, owner_timeout_set, reconcile
from tests.reconcile_app.effects.test_worker_kill import (
    _broker_url,
    pytestmark,  # noqa: F401 (PostgreSQL and Redis, as there)
    redis_broker,  # noqa: F401 (fixture)
)

CUT_AFTER_SECONDS = 2


def test_owner_tasks_have_a_limit_of_their_own_below_the_default():
    limit = settings.RECONCILE_OWNER_TASK_SOFT_TIME_LIMIT
    assert limit < settings.CELERY_TASK_SOFT_TIME_LIMIT
    for task in (effect_readback_task, effect_resolve_task):
        assert (task.soft_time_limit, task.time_limit) == (limit, limit + 30)
    # Everything else keeps the default (a correction's blast radius may take minutes).
    assert memories_expire_task.soft_time_limit == settings.CELERY_TASK_SOFT_TIME_LIMIT


@pytest.fixture
def log_dir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="owner-task-limit-") as tmp:
        yield Path(tmp)


@pytest.mark.django_db(transaction=True)
def test_a_readback_past_its_limit_is_cut_short_then_verified(
    collectible, agent, redis_broker, log_dir: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(effect_readback_task, "soft_time_limit", CUT_AFTER_SECONDS)
    monkeypatch.setattr(effect_readback_task, "time_limit", CUT_AFTER_SECONDS + 30)
    monkeypatch.setattr(effect_readback_task, "_exec_options", None)  # Celery's copy of them
    snapshot = reconcile(agent)
    response = commit(agent, snapshot, "release_collections_hold", "released", "limit-1")
    assert response.status_code == 201, response.content
    effect = Effect.objects.get(idempotency_key="limit-1")
    # The owner turns slow before any worker exists: the queued readback will wait on it.
    # (and the product waits on it longer than that: else the read times out first)
    owner_timeout_set("case-service", 20_000)
    sandbox_fault_add(source="case-service", kind="latency", seconds=8)
    worker = Worker("limited", log_dir, _broker_url())
    workers = [worker]
    try:
        wait_for(
            lambda: f"Soft time limit ({CUT_AFTER_SECONDS}s) exceeded" in worker.log(),
            20,
            "the readback to be cut short at its own limit",
            workers,
        )
        assert "effect_readback_task" in worker.log()
        wait_for(
            lambda: Effect.objects.get(pk=effect.pk).last_check_error != "",
            10,
            "the cut-short readback to say so on the effect",
            workers,
        )
        effect.refresh_from_db()
        assert effect.status == EffectStatus.ACCEPTED  # not lost, not falsely verified
        assert effect.verified_at is None
        assert effect.last_check_error == (
            "readback cut short at its time limit; the sweep asks again"
        )

        sandbox_faults_clear(source="case-service")
        effects_sweep(now=timezone.now() + timedelta(seconds=61))
        wait_for(
            lambda: Effect.objects.get(pk=effect.pk).status == EffectStatus.VERIFIED,
            60,
            "the effect to be verified once the owner answers in time",
            workers,
        )
    except BaseException:
        print(f"----- celery worker log -----\n{worker.log()}")
        raise
    finally:
        worker.stop()
