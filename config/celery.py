"""The Celery application. Settings come from Django settings under the CELERY_ namespace."""

from __future__ import annotations

import gc
import logging
import os
import sys
from contextvars import ContextVar, Token
from pathlib import Path
from typing import Any

from celery import Celery
from celery.signals import (
    beat_init,
    before_task_publish,
    celeryd_after_setup,
    task_postrun,
    task_prerun,
    worker_process_init,
)
from kombu.utils.url import maybe_sanitize_url

from config.heartbeat import WorkerHeartbeat
from config.logs import principal_var, request_id_var, task_id_var, uncaught_as_json_line

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Before the settings load: a setting refused at start stops a worker or beat in one JSON line
# (`celery ... worker|beat` or `python -m celery ...`). Other processes keep Python's own
# hook: `celery shell` hands an error typed at its prompt to it, which is no process stopping.
_started_as = sys.argv[1:]
if "celery" in (Path(sys.argv[0]).name, Path(sys.argv[0]).parent.name) and (
    "worker" in _started_as or "beat" in _started_as
):
    uncaught_as_json_line()

app = Celery("reconcile")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


app.steps["worker"].add(WorkerHeartbeat)
logger = logging.getLogger("config.celery")


# Celery's start-up banners are plain text on standard output, a block a log store takes for
# a dozen events; ./dev starts workers and beat `--quiet` when logs are JSON, and these lines
# say what the banners said (never the broker's password: kombu's sanitizer masks it).
@celeryd_after_setup.connect
def worker_started_line(sender: str = "", instance: Any = None, **kwargs: Any) -> None:
    queues = sorted(instance.app.amqp.queues.consume_from)
    logger.info(
        "worker %s started: queues %s; concurrency %s; broker %s",
        sender,
        ", ".join(queues),
        instance.concurrency,
        maybe_sanitize_url(instance.app.conf.broker_url),
    )


@beat_init.connect
def scheduler_started_line(sender: Any = None, **kwargs: Any) -> None:
    logger.info(
        "scheduler started: %s entries; broker %s",
        len(app.conf.beat_schedule or {}),
        maybe_sanitize_url(app.conf.broker_url),
    )


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


# A task logs under the request that queued it: its id and who asked (config/logs.py). Each
# travels in the message's headers under the name of its log field.
CARRIED: tuple[ContextVar[str], ...] = (request_id_var, principal_var)


@before_task_publish.connect
def request_id_to_message(headers: dict[str, Any] | None = None, **kwargs: Any) -> None:
    """The request (or task) that queues a task hands its id and principal on in the message."""
    if headers is None:
        return
    for variable in CARRIED:
        if value := variable.get():
            headers.setdefault(variable.name, value)


# Restored after each task, so an eager task inside a request leaves the request's own.
_previous: dict[str, list[Token[str]]] = {}


@task_prerun.connect
def request_id_from_message(task_id: str = "", task: Any = None, **kwargs: Any) -> None:
    """A task logs under the id and principal of the request that queued it (an eager task
    under the request it runs in; else its own task id and no principal)."""
    request = getattr(task, "request", None)

    def carried(variable: ContextVar[str]) -> str:
        return (request.get(variable.name) if request is not None else None) or ""

    _previous[task_id] = [
        request_id_var.set(carried(request_id_var) or request_id_var.get() or task_id),
        principal_var.set(carried(principal_var) or principal_var.get()),
        task_id_var.set(task_id),
    ]


@task_postrun.connect
def request_id_restore(task_id: str = "", **kwargs: Any) -> None:
    for token in reversed(_previous.pop(task_id, [])):
        token.var.reset(token)
