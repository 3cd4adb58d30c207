"""A worker SIGKILLed mid-readback loses the task; the sweep brings it back.

NOTES.md: even with acks_late and reject_on_worker_lost, Redis keeps a SIGKILLed task
unacknowledged until the visibility timeout, so the product keeps `next_check_at` in the
database and `effects_sweep` re-enqueues work whose task went missing. This test runs that for
real: a Celery worker subprocess on Redis and the PostgreSQL test database, killed with its
whole process group while the readback is in flight, then a new worker and a sweep.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from reconcile_app.models import Effect, EffectEvent, EffectStatus, SandboxRecord
from reconcile_app.services.outcomes import effects_sweep
from reconcile_app.services.sandbox import sandbox_fault_add, sandbox_faults_clear
from tests.reconcile_app.effects.conftest import SUBJECT, commit, reconcile

pytestmark = [
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="a worker process needs a shared PostgreSQL"
    ),
    pytest.mark.skipif(
        not settings.CELERY_BROKER_URL.startswith("redis://"), reason="needs a Redis broker"
    ),
]

BASE_DIR = Path(settings.BASE_DIR)
CELERY = Path(sys.executable).with_name("celery")
# A Redis database of its own, flushed before and after: no message from another run (or
# from the killed worker's unacknowledged delivery) can reach this test's workers.
BROKER_DB = 15
LATENCY_SECONDS = 8


def _broker_url() -> str:
    parts = urlsplit(settings.CELERY_BROKER_URL)
    return urlunsplit((parts.scheme, parts.netloc, f"/{BROKER_DB}", parts.query, ""))


def _test_database_url() -> str:
    """DATABASE_URL of the database pytest-django created (not the configured one)."""
    db = connection.settings_dict
    credentials = quote(db["USER"] or "", safe="")
    if db["PASSWORD"]:
        credentials += ":" + quote(db["PASSWORD"], safe="")
    host = db["HOST"] or "127.0.0.1"
    port = db["PORT"] or 5432
    return f"postgres://{credentials}@{host}:{port}/{quote(db['NAME'], safe='')}"


def _reset_producer_pools(app: Any) -> None:
    """Drop cached broker connections so the next publish uses the configured broker."""
    if app._pool is not None:
        app._pool.force_close_all()
    app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture
def redis_broker() -> Iterator[Any]:
    """The test process publishes to the dedicated Redis database the workers consume."""
    import redis

    from config.celery import app

    url = _broker_url()
    client = redis.Redis.from_url(url)
    client.flushdb()
    # Celery copies broker_url into broker_read_url / broker_write_url when it configures.
    names = ("broker_url", "broker_read_url", "broker_write_url")
    previous = {name: app.conf[name] for name in names}
    app.conf.update({name: url for name in names})
    _reset_producer_pools(app)
    assert not app.conf.task_always_eager, "this test needs the real broker, not eager tasks"
    try:
        yield client
    finally:
        app.conf.update(previous)
        _reset_producer_pools(app)
        client.flushdb()
        client.close()


class Worker:
    """A real `celery worker` subprocess in its own session (so its group can be killed)."""

    def __init__(self, name: str, log_dir: Path) -> None:
        self.name = name
        self.log_path = log_dir / f"{name}.log"
        env = {**os.environ}
        env.pop("RECONCILE_CELERY_EAGER", None)
        env.update(
            DJANGO_SETTINGS_MODULE="config.settings",
            DATABASE_URL=_test_database_url(),
            CELERY_BROKER_URL=_broker_url(),
            PYTHONUNBUFFERED="1",
        )
        self._log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [
                str(CELERY),
                "-A",
                "config",
                "worker",
                "-l",
                "info",
                "--concurrency",
                "1",
                "-P",
                "prefork",
                "--without-heartbeat",
                "--without-gossip",
                "--without-mingle",
                "-n",
                f"{name}-{uuid.uuid4().hex[:8]}@%h",
            ],
            cwd=BASE_DIR,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def kill(self) -> None:
        """SIGKILL the main process and its pool children at once: no warm shutdown."""
        self._signal_group(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        """SIGTERM (warm shutdown), then SIGKILL if it does not exit in time."""
        if self.process.poll() is None:
            self._signal_group(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGKILL)
                self.process.wait(timeout=10)
        else:
            # The main process is gone; make sure no orphaned pool child survives it.
            self._signal_group(signal.SIGKILL)
        self._log.close()

    def _signal_group(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, sig)  # start_new_session: pgid == pid

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def wait_for(
    predicate: Callable[[], bool], timeout: float, what: str, workers: list[Worker]
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        for worker in workers:
            assert worker.process.poll() is None, f"worker {worker.name} exited early"
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


@pytest.mark.django_db(transaction=True)
def test_readback_killed_with_the_worker_is_recovered_by_the_sweep(
    collectible, agent, redis_broker
):
    started = time.monotonic()
    workers: list[Worker] = []
    queue = "celery"
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
            sandbox_fault_add(source="case-service", kind="latency", seconds=LATENCY_SECONDS)
            first = Worker("doomed", Path(tmp))
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
            second = Worker("survivor", Path(tmp))
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
