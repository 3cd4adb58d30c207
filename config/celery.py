"""The Celery application. Settings come from Django settings under the CELERY_ namespace."""

from __future__ import annotations

import gc
import os
from contextvars import Token
from typing import Any

from celery import Celery
from celery.signals import before_task_publish, task_postrun, task_prerun, worker_process_init

from config.heartbeat import WorkerHeartbeat
from config.logs import request_id_var

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("reconcile")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


app.steps["worker"].add(WorkerHeartbeat)


@worker_process_init.connect
def pool_process_garbage_baseline(**kwargs: Any) -> None:
    """A pool process freezes what start-up built, then starts the collector's count afresh.

    Python runs a full collection only once the objects moved into its oldest generation
    since the last one outnumber a quarter of those that survived it. After start-up that
    is some 160,000 objects, and a task's reference cycles (model instances that cache each
    other, an exception and its frames) reach the oldest generation at a few hundred a minute
    under load: a full collection was over an hour away, and the pool process grew by the
    garbage held meanwhile (1.4 MB a minute in a 14-minute embedded soak, 2026-12-04).
    Frozen, start-up's objects leave the count and every walk; the collection right after
    leaves almost nothing in the oldest generation, so full collections come every hundred
    young ones or so and walk only what tasks have left behind. The web workers freeze too
    (config/gunicorn.py, `post_worker_init`), for the pauses such walks cost a request.
    """
    gc.freeze()
    gc.collect()


REQUEST_ID_HEADER = "request_id"


@before_task_publish.connect
def request_id_to_message(headers: dict[str, Any] | None = None, **kwargs: Any) -> None:
    """The request (or task) that queues a task hands its id on in the message."""
    request_id = request_id_var.get()
    if headers is not None and request_id:
        headers.setdefault(REQUEST_ID_HEADER, request_id)


# Restored after each task, so an eager task inside a request leaves the request's id.
_previous_ids: dict[str, Token[str]] = {}


@task_prerun.connect
def request_id_from_message(task_id: str = "", task: Any = None, **kwargs: Any) -> None:
    """A task logs under the id of the request that queued it (an eager task under the
    request it runs in; else its own task id)."""
    request = getattr(task, "request", None)
    carried = request.get(REQUEST_ID_HEADER) if request is not None else None
    _previous_ids[task_id] = request_id_var.set(carried or request_id_var.get() or task_id)


@task_postrun.connect
def request_id_restore(task_id: str = "", **kwargs: Any) -> None:
    token = _previous_ids.pop(task_id, None)
    if token is not None:
        request_id_var.reset(token)
