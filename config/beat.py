"""The scheduler that says when it is not alone (docs/deploy.md, "The scheduler, exactly once").

A deployment runs one `celery beat`. A second one on another host (a scheduler moved without
stopping the old one, a copy of a host's start-up script) is refused by nothing: its
`--pidfile` guards one host only, and the broker takes every message. Each would queue every
sweep and expiry twice, and nothing said so (seen live: two beats, the effects sweep received
every 15 s instead of 30, not a line in any log).

So each scheduler writes its identity to the shared cache as it ticks, and reads it back
before writing again: when another identity stands there since its own last write, another
scheduler is running, and it logs a warning naming it, every tick while that lasts. Its
first tick only writes: what it finds then may be a predecessor that was just killed.
"""

from __future__ import annotations

import logging
import os
import socket
import time
import uuid
from typing import Any

from celery.beat import PersistentScheduler
from django.core.cache import cache

SCHEDULER_KEY = "reconcile:scheduler"
# A scheduler ticks at least as often as its most frequent entry (30 s, the effects sweep);
# the key outlives a few of those, so one left by a scheduler that died goes by itself.
SCHEDULER_KEY_SECONDS = 300
CHECK_EVERY_SECONDS = 15.0

logger = logging.getLogger("config.beat")


class SchedulerPresence:
    """One scheduler's identity in the shared cache, and what it finds there."""

    def __init__(self, identity: str) -> None:
        self.identity = identity
        self.wrote = False

    def check(self) -> str | None:
        """Write this scheduler's identity; return another's found since the last write."""
        other = None
        try:
            found = cache.get(SCHEDULER_KEY)
            if self.wrote and found is not None and found["id"] != self.identity:
                other = str(found["id"])
            cache.set(
                SCHEDULER_KEY, {"id": self.identity, "at": time.time()}, SCHEDULER_KEY_SECONDS
            )
            self.wrote = True
        except Exception:  # the cache out of reach must never stop scheduling
            logger.debug("scheduler presence not recorded", exc_info=True)
        return other


class ExclusiveScheduler(PersistentScheduler):
    """Celery's persistent scheduler, warning while another scheduler runs."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Host and process for the operator; the random part tells apart a scheduler started
        # again with the same pid (a container restarted).
        identity = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.presence = SchedulerPresence(identity)
        self.presence_checked_at = float("-inf")
        super().__init__(*args, **kwargs)

    def tick(self, *args: Any, **kwargs: Any) -> float:
        now = time.monotonic()
        if now - self.presence_checked_at >= CHECK_EVERY_SECONDS:
            self.presence_checked_at = now
            other = self.presence.check()
            if other is not None:
                logger.warning(
                    "another scheduler is running: %s (this one is %s); every scheduled "
                    "task is queued twice: run exactly one celery beat (docs/deploy.md)",
                    other,
                    self.presence.identity,
                )
        return float(super().tick(*args, **kwargs))
