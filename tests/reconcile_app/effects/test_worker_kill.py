"""A worker SIGKILLed mid-readback loses the task; the sweep brings it back.

NOTES.md: even with acks_late and reject_on_worker_lost, Redis keeps a SIGKILLed task
unacknowledged until the visibility timeout, so the product keeps `next_check_at` in the
database and `effects_sweep` re-enqueues work whose task went missing. This test runs that for
real: a Celery worker subprocess on Redis and the PostgreSQL test database, killed with its
whole process group while the readback is in flight, then a new worker and a sweep.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from config.queues import READBACKS
from reconcile_app.choices import EffectStatus
from reconcile_app.models import Effect, EffectEvent
from reconcile_app.services.effects import effects_sweep
from sandbox_app.models import SandboxRecord
from sandbox_app.services import sandbox_fault_add, sandbox_faults_clear
from tests.reconcile_app.effects.celery_workers import Worker, publishing_to, wait_for
from tests.reconcile_app.effects.conftest import SUBJECT, commit, owner_timeout_set, reconcile

pytestmark = [
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="a worker process needs a shared PostgreSQL"
    ),
    pytest.mark.skipif(
        not settings.CELERY_BROKER_URL.startswith("redis://"), reason="needs a Redis broker"
    ),
]

# A Redis database of its own, flushed before and after: no message from another run (or
# from the killed worker's unacknowledged delivery) can reach this test's workers.
BROKER_DB = 15
LATENCY_SECONDS = 8


def _broker_url() -> str:
    parts = urlsplit(settings.CELERY_BROKER_URL)
    return urlunsplit((parts.scheme, parts.netloc, f"/{BROKER_DB}", parts.query, ""))


@pytest.fixture
def redis_broker() -> Iterator[Any]:
    """The test process publishes to the dedicated Redis database the workers consume."""
    import redis

    url = _broker_url()
    client = redis.Redis.from_url(url)
    client.flushdb()
    try:
        with publishing_to(url):
            yield client
    finally:
        client.flushdb()
        client.close()


@pytest.mark.django_db(transaction=True)
def test_readback_killed_with_the_worker_is_recovered_by_the_sweep(
    collectible, agent, redis_broker
):
    started = time.monotonic()
    workers: list[Worker] = []
    queue = READBACKS  # where config/queues.py routes readbacks
    with tempfile.TemporaryDirectory(prefix="worker-kill-") as tmp:
        try:
            snapshot = reconcile(agent)
            response = commit(
                agent, snapshot, "release_collections_hold", "released", "worker-kill-1"
            )
            assert response.status_code == 201, response.content
            effect = Effect.objects.get(idempotency_key="worker-kill-1")
            assert effect.status == EffectStatus.ACCEPTED
            assert effect.readback_attempts == 0
            # The commit's on_commit hook published the readback to the real broker.
            assert redis_broker.llen(queue) == 1

            # The owner becomes slow before any worker exists: the readback will hang in it.
            # (and the product waits on it longer than that: else the read times out first)
            owner_timeout_set("case-service", 20_000)
            sandbox_fault_add(source="case-service", kind="latency", seconds=LATENCY_SECONDS)
            first = Worker("doomed", Path(tmp), _broker_url())
            workers.append(first)
            wait_for(
                lambda: Effect.objects.get(pk=effect.pk).readback_attempts >= 1,
                20,
                "the first worker to start the readback",
                workers,
            )
            first.kill()

            effect.refresh_from_db()
            # Not lost (still accepted, still due for a check), not falsely verified.
            assert effect.status == EffectStatus.ACCEPTED
            assert effect.verified_at is None
            assert effect.next_check_at is not None
            assert not EffectEvent.objects.filter(effect=effect, kind="readback").exists()
            record = SandboxRecord.objects.get(
                source="case-service", subject=SUBJECT, field="collections_status"
            )
            assert (record.version, record.value) == (43, "released")

            sandbox_faults_clear(source="case-service")
            second = Worker("survivor", Path(tmp), _broker_url())
            workers.append(second)
            # The product's guarantee against lost tasks: the periodic sweep.
            swept = effects_sweep(now=timezone.now() + timedelta(seconds=61))
            assert swept["readbacks"] == 1, swept
            wait_for(
                lambda: Effect.objects.get(pk=effect.pk).status == EffectStatus.VERIFIED,
                30,
                "the sweep's readback to verify the effect",
                [second],
            )
            effect.refresh_from_db()
            assert effect.readback_attempts >= 2
            assert effect.verified_at is not None
            readbacks = EffectEvent.objects.filter(effect=effect, kind="readback")
            assert readbacks.count() == 1
            assert readbacks.get().detail["version"] == 43
        except BaseException:
            for worker in workers:
                print(f"----- celery worker {worker.name} log -----\n{worker.log()}")
            raise
        finally:
            for worker in workers:
                worker.stop()
    assert time.monotonic() - started < 60
