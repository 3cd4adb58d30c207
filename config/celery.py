"""The Celery application. Settings come from Django settings under the CELERY_ namespace."""

from __future__ import annotations

import os
from typing import Any

from celery import Celery, bootsteps

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("reconcile")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


class WorkerHeartbeat(bootsteps.StartStopStep):
    """Every worker says it is alive every 15 s, for `/readyz` (config/health.py). A timer in
    the worker itself, not a scheduled task: it must not depend on beat or on a free slot."""

    requires = {"celery.worker.components:Timer"}

    def __init__(self, worker: Any, **kwargs: Any) -> None:
        super().__init__(worker, **kwargs)
        self.timer_ref: Any = None

    def start(self, worker: Any) -> None:
        from config.health import HEARTBEAT_EVERY_SECONDS, worker_heartbeat_record

        worker_heartbeat_record(worker.hostname)
        self.timer_ref = worker.timer.call_repeatedly(
            HEARTBEAT_EVERY_SECONDS, worker_heartbeat_record, (worker.hostname,), priority=10
        )

    def stop(self, worker: Any) -> None:
        if self.timer_ref is not None:
            self.timer_ref.cancel()


app.steps["worker"].add(WorkerHeartbeat)
