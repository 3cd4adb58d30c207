"""The Celery application. Settings come from Django settings under the CELERY_ namespace."""

from __future__ import annotations

import os
from contextvars import Token
from typing import Any

from celery import Celery
from celery.signals import before_task_publish, task_postrun, task_prerun

from config.heartbeat import WorkerHeartbeat
from config.logs import request_id_var

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("reconcile")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


app.steps["worker"].add(WorkerHeartbeat)


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
