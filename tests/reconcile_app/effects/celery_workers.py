"""Real Celery workers for the PostgreSQL + Redis effect tests (a plain module, not a conftest).

`Worker` runs `celery -A config worker` as a subprocess in its own session, on the PostgreSQL
database pytest-django created and on a broker the test chooses; `publishing_to` points the test
process's Celery app at that same broker; `wait_for` polls the database while the workers run.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from django.conf import settings
from django.db import connection

BASE_DIR = Path(settings.BASE_DIR)
CELERY = Path(sys.executable).with_name("celery")


def _test_database_url() -> str:
    """DATABASE_URL of the database pytest-django created (not the configured one)."""
    db = connection.settings_dict
    credentials = quote(db["USER"] or "", safe="")
    if db["PASSWORD"]:
        credentials += ":" + quote(db["PASSWORD"], safe="")
    host = db["HOST"] or "127.0.0.1"
    port = db["PORT"] or 5432
    return f"postgres://{credentials}@{host}:{port}/{quote(db['NAME'], safe='')}"


def reset_producer_pools(app: Any) -> None:
    """Drop cached broker connections so the next publish uses the configured broker.

    kombu keeps producer pools in a process-wide registry too; a pool closed here but left
    there makes every later publish — even an eager task's, which still borrows a producer —
    fail with "Acquire on closed pool" in whatever test runs next in this process.
    """
    from kombu import pools

    if app._pool is not None:
        app._pool.force_close_all()
    pools.reset()
    app._pool = None
    app.amqp._producer_pool = None


@contextlib.contextmanager
def publishing_to(url: str, transport_options: dict[str, Any] | None = None) -> Iterator[Any]:
    """The test process's Celery app publishes to `url` (the workers' broker) until exit.

    `transport_options`, when given, replaces `broker_transport_options` for the duration.
    """
    from config.celery import app

    # Celery copies broker_url into broker_read_url / broker_write_url when it configures.
    names = ("broker_url", "broker_read_url", "broker_write_url")
    previous = {name: app.conf[name] for name in names}
    previous_options = app.conf.broker_transport_options
    app.conf.update({name: url for name in names})
    if transport_options is not None:
        app.conf.broker_transport_options = transport_options
    reset_producer_pools(app)
    try:
        assert not app.conf.task_always_eager, "this test needs the real broker, not eager tasks"
        yield app
    finally:
        app.conf.update(previous)
        if transport_options is not None:
            app.conf.broker_transport_options = previous_options
        reset_producer_pools(app)


class Worker:
    """A real `celery worker` subprocess in its own session (so its group can be killed)."""

    def __init__(self, name: str, log_dir: Path, broker_url: str, *, concurrency: int = 1) -> None:
        self.name = name
        self.log_path = log_dir / f"{name}.log"
        env = {**os.environ}
        env.pop("RECONCILE_CELERY_EAGER", None)
        env.update(
            DJANGO_SETTINGS_MODULE="config.settings",
            DATABASE_URL=_test_database_url(),
            CELERY_BROKER_URL=broker_url,
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
                str(concurrency),
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

    def alive(self) -> bool:
        return self.process.poll() is None

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

    def connects(self) -> int:
        """How many times the consumer reported a (re)connection to a Redis broker."""
        return self.log().count("Connected to redis://")


def wait_for(
    predicate: Callable[[], bool], timeout: float, what: str, workers: Sequence[Worker]
) -> float:
    """Poll until `predicate()` and return the seconds it took.

    Fails if it never holds within `timeout`, or if any of `workers` exits meanwhile (pass only
    the workers that must stay up, e.g. not one the test killed on purpose).
    """
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if predicate():
            return time.monotonic() - started
        for worker in workers:
            assert worker.alive(), f"worker {worker.name} exited early"
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
