"""Queue a task once the transaction that recorded its work commits, without letting the
broker decide the answer.

Every task queued from a request has its work on record first: an effect's `next_check_at`,
a bulk job's state, a correction still `computing`, a quarantine still `applying`, an
activation still `running`, a drill run. When the broker refuses the message (down, full,
or silent past its socket timeout), the change is committed already: answering 500 would
tell the caller nothing happened when it did, and an agent might act again. So the failure
is logged, the answer stands, and the sweeps queue the work again when it is due
(services/effects/sweep.py, bulk_jobs.py, lost_work.py). A drill run has no sweep (running
one twice at once would inject its faults twice): the log says to start it again.

Where queuing is the whole request (an operator's "check now"), there is nothing to stand
behind: `enqueue_or_refuse` sends the message inside the transaction that records the
request, so a refusal rolls the record back and answers 503 `broker_unavailable`.

A refusal is kombu's OperationalError, into which it turns a refused or silent Redis (after
Celery's retries) and the embedded broker's unwritable folder alike; a message that cannot be
encoded is not one, and stays a fault to fix.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Task
from django.db import transaction
from kombu.exceptions import OperationalError as BrokerUnavailable

from reconcile_app.errors import DomainError

logger = logging.getLogger(__name__)
# A restarted Redis is usually back within seconds.
BROKER_RETRY_AFTER_SECONDS = 5


def enqueue_on_commit(task: Task, *args: Any, swept: bool = True) -> None:
    """`task.delay(*args)` after the current transaction commits (at once outside one)."""

    def send() -> None:
        try:
            task.delay(*args)
        except BrokerUnavailable:  # refused, or silent past its socket timeout and retries
            then = "a sweep queues it again when due" if swept else "start it again"
            logger.exception("could not queue %s%r: the change is saved; %s", task.name, args, then)

    transaction.on_commit(send)


def enqueue_or_refuse(task: Task, *args: Any) -> None:
    """`task.delay(*args)` now, inside the caller's transaction; refused by the broker, a 503
    that undoes it. The task may start before the transaction commits: a caller's task must
    read nothing the transaction writes."""
    try:
        task.delay(*args)
    except BrokerUnavailable as exc:
        logger.exception("could not queue %s%r: refused", task.name, args)
        raise DomainError(
            "the task queue could not take the check; nothing was recorded",
            code="broker_unavailable",
            status=503,
            title="Service unavailable",
            retry_after=BROKER_RETRY_AFTER_SECONDS,
        ) from exc
