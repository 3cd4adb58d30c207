"""The embedded broker keeps up: a worker takes its next task as soon as it is free.

kombu's filesystem transport looks for messages every `polling_interval` seconds, and a worker
that prefetches one message (acks late) looks again only after finishing the last: with the
default of a second, each worker process ran about one task per second, however short the
tasks, and under a soak's load the readbacks queued for minutes. A real worker here, on its
own broker folder, runs a batch of short tasks in well under a second each.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from tests.reconcile_app.effects.celery_workers import publishing_to

CELERY = Path(sys.executable).with_name("celery")
TASKS = 12
# With one-second polling the batch takes at least TASKS seconds.
WITHIN_SECONDS = TASKS / 2

pytestmark = pytest.mark.skipif(
    connection.vendor != "sqlite" or not settings.CELERY_BROKER_URL.startswith("filesystem://"),
    reason="the embedded mode: SQLite and the filesystem broker",
)


def _broker_options(folder: Path) -> dict[str, object]:
    for name in ("in", "processed", "control"):
        (folder / name).mkdir(parents=True, exist_ok=True)
    return {
        "data_folder_in": str(folder / "in"),
        "data_folder_out": str(folder / "in"),
        "processed_folder": str(folder / "processed"),
        "control_folder": str(folder / "control"),
        "store_processed": False,
    }


def _wait_for(predicate, timeout: float, what: str, log: Path) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if predicate():
            return time.monotonic() - started
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}:\n{log.read_text(errors='replace')}")


def test_a_worker_runs_short_tasks_back_to_back(tmp_path, transactional_db):
    from reconcile_app.tasks import effects_sweep_task

    options = _broker_options(tmp_path / "broker")
    log = tmp_path / "worker.log"
    env = {
        **os.environ,
        "RECONCILE_VAR_DIR": str(tmp_path),
        "RECONCILE_SQLITE_PATH": str(connection.settings_dict["NAME"]),
        "RECONCILE_LOG_FORMAT": "text",
    }
    env.pop("CELERY_BROKER_URL", None)
    env.pop("RECONCILE_CELERY_EAGER", None)
    with log.open("wb") as output:
        worker = subprocess.Popen(
            [
                *(str(CELERY), "-A", "config", "worker", "-l", "info", "--concurrency", "1"),
                *("--without-heartbeat", "--without-gossip", "--without-mingle"),
                *("-n", f"broker-test-{uuid.uuid4().hex[:8]}@%h"),
            ],
            cwd=settings.BASE_DIR,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait_for(lambda: "ready." in log.read_text(errors="replace"), 90, "the worker", log)
        with publishing_to("filesystem://", options):
            started = time.monotonic()
            for _ in range(TASKS):
                effects_sweep_task.delay()

            def done() -> bool:
                return log.read_text(errors="replace").count("succeeded in") >= TASKS

            _wait_for(done, 60, f"{TASKS} tasks", log)
            took = time.monotonic() - started
        assert took < WITHIN_SECONDS, f"{TASKS} short tasks took {took:.1f}s"
    finally:
        os.killpg(worker.pid, 9)
        worker.wait(10)


def test_a_message_is_never_taken_half_written(tmp_path, monkeypatch):
    """A producer stalls while writing its message (a busy machine deschedules it): a worker
    polling meanwhile finds no message, never an empty one (which stopped the worker)."""
    import threading
    from queue import Empty

    import kombu.transport.filesystem
    from kombu.utils.json import dumps

    import config.broker
    from config.celery import app

    stalled, release = threading.Event(), threading.Event()

    def stalling_dumps(value):
        stalled.set()
        release.wait(10)
        return dumps(value)

    monkeypatch.setattr(kombu.transport.filesystem, "dumps", stalling_dumps)
    monkeypatch.setattr(config.broker, "dumps", stalling_dumps)
    options = _broker_options(tmp_path / "broker")
    with (
        app.connection_for_write("filesystem://", transport_options=options) as producer,
        app.connection_for_write("filesystem://", transport_options=options) as consumer,
    ):
        writing = threading.Thread(
            target=producer.default_channel._put, args=("celery", {"body": "whole"})
        )
        writing.start()
        try:
            assert stalled.wait(10)
            with pytest.raises(Empty):
                consumer.default_channel._get("celery")
        finally:
            release.set()
            writing.join(10)
        assert consumer.default_channel._get("celery") == {"body": "whole"}
