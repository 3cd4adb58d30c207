"""Redis restarted in the middle of a burst of readbacks: every accepted effect still concludes.

Issue 8, point 5. A private `redis-server` (nothing on disk: `--save "" --appendonly no`) is
the broker for this test alone. Thirty effects are accepted on thirty subjects, so thirty
readbacks are queued; the owner is made slow (a `latency` fault) so a real Celery worker
(concurrency 2, on the PostgreSQL test database) is part-way through them when the Redis
server is SIGKILLed and a fresh, empty one started on the same port. Every queued and
unacknowledged message is gone. The product's answer is the database: each accepted effect
carries `next_check_at`, and `effects_sweep` re-enqueues the readbacks whose task went missing.
The test asserts that every effect ends verified or flagged (none left `accepted`), that each
was judged exactly once, and that nothing was executed twice at the owner.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from config.queues import READBACKS
from drills_app.bench.common import free_port
from reconcile_app.choices import EffectStatus
from reconcile_app.models import Effect, EffectEvent
from reconcile_app.services.effects import effects_sweep
from reconcile_app.services.evidence import evidence_append
from sandbox_app.models import SandboxEffect, SandboxRecord
from sandbox_app.services import (
    sandbox_fault_add,
    sandbox_faults_clear,
    sandbox_record_write,
)
from tests.conftest import COLLECTIONS, ago
from tests.reconcile_app.effects.celery_workers import Worker, publishing_to, wait_for
from tests.reconcile_app.effects.conftest import commit

REDIS_SERVER = shutil.which("redis-server")

pytestmark = [
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="a worker process needs a shared PostgreSQL"
    ),
    pytest.mark.skipif(REDIS_SERVER is None, reason="needs redis-server on PATH"),
]

EFFECTS = 30
START_VERSION = 42
ACTION = "release_collections_hold"
QUEUE = READBACKS  # where config/queues.py routes readbacks
# Restart Redis once this many readbacks have concluded (and well before all of them have).
CONCLUDED_BEFORE_RESTART = 4
CONCLUDED = (EffectStatus.VERIFIED, EffectStatus.POSTCONDITION_FAILED)


class RedisServer:
    """A private, memory-only redis-server on a loopback port; restartable on the same port."""

    def __init__(self, log_dir: Path) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.log_dir = log_dir
        self.generation = 0
        self.process: subprocess.Popen[bytes] | None = None
        self._log: Any = None
        self.logs: list[Path] = []

    def start(self) -> None:
        self.generation += 1
        log_path = self.log_dir / f"redis-{self.generation}.log"
        self.logs.append(log_path)
        self._log = log_path.open("wb")
        assert REDIS_SERVER is not None
        self.process = subprocess.Popen(
            [
                REDIS_SERVER,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
                "--dir",
                str(self.log_dir),
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self._wait_ready()

    def _wait_ready(self) -> None:
        import redis

        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            assert self.process is not None
            assert self.process.poll() is None, f"redis-server exited:\n{self.log()}"
            client = redis.Redis.from_url(self.url, socket_timeout=1)
            try:
                if client.ping():
                    return
            except redis.exceptions.ConnectionError:
                pass
            finally:
                client.close()
            time.sleep(0.05)
        raise AssertionError(f"redis-server did not answer on port {self.port}")

    def kill(self) -> None:
        """SIGKILL: no shutdown save, no goodbye to clients; everything in memory is gone."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)
        if self._log is not None:
            self._log.close()
            self._log = None

    def client(self) -> Any:
        import redis

        return redis.Redis.from_url(self.url, socket_timeout=5)

    def llen(self, key: str) -> int:
        client = self.client()
        try:
            return int(client.llen(key))
        finally:
            client.close()

    def log(self) -> str:
        return "\n".join(
            f"--- {path.name} ---\n{path.read_text(errors='replace')}"
            for path in self.logs
            if path.exists()
        )


@pytest.fixture
def private_redis() -> Iterator[RedisServer]:
    """A private Redis, and the test process's Celery app publishing to it."""
    with tempfile.TemporaryDirectory(prefix="redis-restart-") as tmp:
        server = RedisServer(Path(tmp))
        server.start()
        try:
            # What config/settings.py sets for any non-filesystem broker (the worker gets it
            # from its CELERY_BROKER_URL); the test process may have been configured for
            # filesystem://.
            with publishing_to(server.url, transport_options={"visibility_timeout": 3600}):
                yield server
        finally:
            server.kill()


def _collectible(index: int) -> str:
    """One more subject like the `collectible` fixture's: collectible at version 42."""
    subject = f"account-rr-{index:02d}"
    sandbox_record_write(
        source="case-service",
        subject=subject,
        field="collections_status",
        value="collect",
        version=START_VERSION,
        valid_from=ago(minutes=20),
    )
    sandbox_record_write(
        source="complaints-service",
        subject=subject,
        field="complaint_status",
        value="none",
        valid_from=ago(days=2),
    )
    evidence_append(
        kind="observation",
        subject=subject,
        field="collections_status",
        value="collect",
        source="case-ledger",
        observed_at=ago(minutes=20),
        evidence_id=f"ev-rr-collect-{index:02d}",
    )
    return subject


def _reconcile(persona: Any, subject: str) -> dict[str, Any]:
    response = persona.post(
        "/api/v1/reconcile",
        {
            "subject": subject,
            "purpose": "collections",
            "decision_class": COLLECTIONS,
            "proposed_action": ACTION,
        },
    )
    assert response.status_code == 201, response.content
    return response.json()


def _concluded(ids: list[int]) -> int:
    return Effect.objects.filter(pk__in=ids, status__in=CONCLUDED).count()


def _none_accepted(ids: list[int]) -> bool:
    return not Effect.objects.filter(pk__in=ids, status=EffectStatus.ACCEPTED).exists()


def _statuses(ids: list[int]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for status in Effect.objects.filter(pk__in=ids).values_list("status", flat=True):
        counts[status] = counts.get(status, 0) + 1
    return counts


@pytest.mark.django_db(transaction=True)
def test_redis_restart_mid_burst_every_accepted_effect_concludes(estate, agent, private_redis):
    started = time.monotonic()
    redis_server = private_redis
    workers: list[Worker] = []
    log_dir = redis_server.log_dir
    timeline: list[str] = []

    def note(message: str) -> None:
        timeline.append(f"{time.monotonic() - started:6.2f}s {message}")

    try:
        # 1. The burst: thirty accepted effects, thirty readbacks queued on the real broker.
        ids: list[int] = []
        subjects: list[str] = []
        for index in range(EFFECTS):
            subject = _collectible(index)
            snapshot = _reconcile(agent, subject)
            response = commit(agent, snapshot, ACTION, "released", f"redis-restart-{index:02d}")
            assert response.status_code == 201, response.content
            effect = Effect.objects.get(idempotency_key=f"redis-restart-{index:02d}")
            assert effect.status == EffectStatus.ACCEPTED, effect.status
            assert effect.next_check_at is not None
            ids.append(effect.pk)
            subjects.append(subject)
        assert redis_server.llen(QUEUE) == EFFECTS, "each acceptance publishes one readback"
        note(f"{EFFECTS} effects accepted, {EFFECTS} readbacks queued")

        # The owner becomes slow: each readback takes a second, two at a time.
        sandbox_fault_add(source="case-service", kind="latency", seconds=1)
        first = Worker("burst", log_dir, redis_server.url, concurrency=2)
        workers.append(first)
        wait_for(
            lambda: _concluded(ids) >= CONCLUDED_BEFORE_RESTART,
            30,
            f"{CONCLUDED_BEFORE_RESTART} readbacks to conclude",
            workers[-1:],
        )

        # 2. Redis dies mid-burst and comes back empty on the same port.
        redis_server.kill()
        at_kill = _concluded(ids)
        note(f"redis SIGKILLed with {at_kill}/{EFFECTS} concluded")
        assert at_kill < EFFECTS, "the burst finished before the restart: nothing was tested"
        redis_server.start()
        note("fresh redis-server started on the same port")

        # 3. The worker reconnects, or dies and is replaced.
        connects_before = 1
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if not first.alive() or first.connects() > connects_before:
                break
            time.sleep(0.1)
        if first.alive():
            assert first.connects() > connects_before, (
                "the worker is alive but never reconnected to the restarted Redis"
            )
            note("worker reconnected to the fresh redis")
        else:
            note(f"worker exited (code {first.process.returncode}); starting a replacement")
            workers.append(Worker("replacement", log_dir, redis_server.url, concurrency=2))

        # Readbacks in flight at the kill finish (they talk to the database, not Redis); the
        # queued ones are gone with the old server. Wait out the one-second reads in flight.
        time.sleep(1.5)
        stranded = list(
            Effect.objects.filter(pk__in=ids, status=EffectStatus.ACCEPTED).values_list(
                "pk", flat=True
            )
        )
        note(
            f"after restart: {len(stranded)} accepted with their task lost, "
            f"queue length {redis_server.llen(QUEUE)}, statuses {_statuses(ids)}"
        )
        assert stranded, "no readback was lost: the restart came too late to test anything"
        assert redis_server.llen(QUEUE) == 0, "the fresh Redis cannot hold the old messages"

        # The product's guarantee against lost tasks: the sweep, once `next_check_at` passed.
        sandbox_faults_clear(source="case-service")
        swept = effects_sweep(now=timezone.now() + timedelta(seconds=61))
        note(f"sweep 1: {swept}")
        # Only the newest worker must stay up: the first may have died with the old Redis.
        assert swept["readbacks"] == len(stranded), swept
        try:
            wait_for(
                lambda: _none_accepted(ids),
                20,
                "the swept readbacks to conclude",
                workers[-1:],
            )
        except AssertionError:
            # One more sweep, late enough to pass the backoff the first one set.
            note(f"still accepted after sweep 1: {_statuses(ids)}")
            swept = effects_sweep(now=timezone.now() + timedelta(seconds=3600 + 61))
            note(f"sweep 2: {swept}")
            wait_for(
                lambda: _none_accepted(ids),
                30,
                "the second sweep's readbacks to conclude",
                workers[-1:],
            )
        note(f"all concluded: {_statuses(ids)}")

        # Every accepted effect ended verified or flagged; none is left accepted.
        effects = list(Effect.objects.filter(pk__in=ids).order_by("pk"))
        assert len(effects) == EFFECTS
        left = [(e.idempotency_key, e.status) for e in effects if e.status not in CONCLUDED]
        assert not left, left
        # Each was judged exactly once (a redelivered or re-swept readback changes nothing),
        # and the verdict matches the owner's record.
        for effect in effects:
            readbacks = EffectEvent.objects.filter(effect=effect, kind="readback")
            assert readbacks.count() == 1, (effect.idempotency_key, readbacks.count())
            record = SandboxRecord.objects.get(
                source="case-service", subject=effect.subject, field="collections_status"
            )
            holds = record.value == "released" and record.version >= (effect.resulting_version or 0)
            expected = EffectStatus.VERIFIED if holds else EffectStatus.POSTCONDITION_FAILED
            assert effect.status == expected, (effect.idempotency_key, effect.status, record)
            assert effect.next_check_at is None
        # Nothing executed twice at the owner: one ledger entry per effect, one version step.
        keys = [e.idempotency_key for e in effects]
        assert SandboxEffect.objects.filter(source="case-service").count() == EFFECTS
        assert (
            SandboxEffect.objects.filter(source="case-service", idempotency_key__in=keys).count()
            == EFFECTS
        )
        versions = dict(
            SandboxRecord.objects.filter(
                source="case-service", subject__in=subjects, field="collections_status"
            ).values_list("subject", "version")
        )
        assert versions == {subject: START_VERSION + 1 for subject in subjects}, versions
        note("done")
        print("\n".join(["", "redis restart timeline:", *timeline]))
    except BaseException:
        print("\n".join(["", "redis restart timeline:", *timeline]))
        for worker in workers:
            print(f"----- celery worker {worker.name} log -----\n{worker.log()}")
        print(f"----- redis-server logs -----\n{redis_server.log()}")
        raise
    finally:
        for worker in workers:
            worker.stop()
        with contextlib.suppress(Exception):
            sandbox_faults_clear(source="case-service")
    assert time.monotonic() - started < 90
