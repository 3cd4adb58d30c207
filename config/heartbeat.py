"""Each Celery worker says it is alive, for each queue it consumes, for `/readyz`
(config/health.py).

A timer in the worker itself (a bootstep, added in config/celery.py), not a scheduled task:
it must depend neither on beat nor on a free slot in the pool. The heartbeats go to the
cache, which every process shares (a directory in the embedded mode, Redis with services).
One per queue: docs/deploy.md runs workers per queue, and a deployment whose readbacks
workers are all gone (agents' `wait` then hangs) must not look ready because a drills
worker is alive.
"""

from __future__ import annotations

import time
from typing import Any

from celery import bootsteps
from django.core.cache import cache

from config.queues import CORRECTIONS, DEFAULT, READBACKS, TASK_QUEUES

HEARTBEAT_KEY_PREFIX = "reconcile:worker-heartbeat:"
# The one key workers wrote before heartbeats were per queue, still written: web hosts of the
# release before read only it, and hosts of this release accept it while no worker writes
# per-queue keys yet (a rolling upgrade that replaces the web hosts first stays ready).
LEGACY_HEARTBEAT_KEY = "reconcile:worker-heartbeat"
HEARTBEAT_EVERY_SECONDS = 15.0
HEARTBEAT_FRESH_SECONDS = 60.0
# The queues a deployment cannot serve without: agents wait on readbacks; corrections and
# quarantines list what they affect on `corrections`; expiries and release gates run on
# `default`. A deployment may run no drills worker until it runs a drill.
READY_QUEUES = (READBACKS, CORRECTIONS, DEFAULT)


def heartbeat_key(queue: str) -> str:
    return f"{HEARTBEAT_KEY_PREFIX}{queue}"


def worker_heartbeat_record(hostname: str, queues: tuple[str, ...] = TASK_QUEUES) -> None:
    """Called in a worker, on its timer: a worker consuming `queues` was alive just now."""
    seen = {"at": time.time(), "hostname": hostname}
    keys = {heartbeat_key(queue): seen for queue in queues}
    # `queues` marks it as this release's: only an older worker's stands in for per-queue keys.
    cache.set_many({**keys, LEGACY_HEARTBEAT_KEY: {**seen, "queues": queues}}, timeout=300)


def heartbeats_clear() -> None:
    cache.delete_many([*(heartbeat_key(queue) for queue in TASK_QUEUES), LEGACY_HEARTBEAT_KEY])


def _queues_consumed(worker: Any) -> tuple[str, ...]:
    """The queues `-Q` selected (all four without it)."""
    try:
        selected = worker.app.amqp.queues.consume_from
    except AttributeError:
        return TASK_QUEUES
    return tuple(str(name) for name in selected) or TASK_QUEUES


class WorkerHeartbeat(bootsteps.StartStopStep):
    requires = {"celery.worker.components:Timer"}

    def __init__(self, worker: Any, **kwargs: Any) -> None:
        super().__init__(worker, **kwargs)
        self.timer_ref: Any = None

    def start(self, worker: Any) -> None:
        beat = (worker.hostname, _queues_consumed(worker))
        worker_heartbeat_record(*beat)
        self.timer_ref = worker.timer.call_repeatedly(
            HEARTBEAT_EVERY_SECONDS, worker_heartbeat_record, beat, priority=10
        )

    def stop(self, worker: Any) -> None:
        if self.timer_ref is not None:
            self.timer_ref.cancel()


# The effects sweep's last run, for `/metrics`: beat (exactly one per deployment) schedules it
# every 30 s on the `readbacks` queue (config/queues.py). Nothing else shows that scheduling
# stopped (beat down): lost readbacks and resolutions are then never queued again, and
# quarantines and memories never expire.
SWEEP_RAN_KEY = "reconcile:effects-sweep-ran"


def sweep_ran_record() -> None:
    cache.set(SWEEP_RAN_KEY, time.time(), timeout=7 * 24 * 3600)


def sweep_age_seconds() -> float | None:
    """Seconds since the sweep last finished; None before it ever ran (or for a week)."""
    ran = cache.get(SWEEP_RAN_KEY)
    return None if ran is None else max(0.0, time.time() - float(ran))
