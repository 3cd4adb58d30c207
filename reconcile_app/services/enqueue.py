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
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Task
from django.db import transaction
from kombu.exceptions import OperationalError as BrokerUnavailable

logger = logging.getLogger(__name__)


def enqueue_on_commit(task: Task, *args: Any, swept: bool = True) -> None:
    """`task.delay(*args)` after the current transaction commits (at once outside one)."""

    def send() -> None:
        try:
            task.delay(*args)
        except BrokerUnavailable:  # refused, or silent past its socket timeout and retries
            then = "a sweep queues it again when due" if swept else "start it again"
            logger.exception("could not queue %s%r: the change is saved; %s", task.name, args, then)

    transaction.on_commit(send)
