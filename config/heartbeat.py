"""Each Celery worker says it is alive, for `/readyz` (config/health.py).

A timer in the worker itself (a bootstep, added in config/celery.py), not a scheduled task:
it must depend neither on beat nor on a free slot in the pool. The heartbeat goes to the
cache, which every process shares (a directory in the embedded mode, Redis with services).
"""

from __future__ import annotations

import time
from typing import Any

from celery import bootsteps
from django.core.cache import cache

HEARTBEAT_KEY = "reconcile:worker-heartbeat"
HEARTBEAT_EVERY_SECONDS = 15.0
HEARTBEAT_FRESH_SECONDS = 60.0


def worker_heartbeat_record(hostname: str) -> None:
    """Called in a worker, on its timer: this worker was alive just now."""
    cache.set(HEARTBEAT_KEY, {"at": time.time(), "hostname": hostname}, timeout=300)


class WorkerHeartbeat(bootsteps.StartStopStep):
    requires = {"celery.worker.components:Timer"}

    def __init__(self, worker: Any, **kwargs: Any) -> None:
        super().__init__(worker, **kwargs)
        self.timer_ref: Any = None

    def start(self, worker: Any) -> None:
        worker_heartbeat_record(worker.hostname)
        self.timer_ref = worker.timer.call_repeatedly(
            HEARTBEAT_EVERY_SECONDS, worker_heartbeat_record, (worker.hostname,), priority=10
        )

    def stop(self, worker: Any) -> None:
        if self.timer_ref is not None:
            self.timer_ref.cancel()
