"""The sweep for one-shot work whose Celery task may have been lost (a killed worker, a broker
restart): a quarantine still `applying`, a correction still `computing`, a contract
activation still `running`. Each task is idempotent, so queuing one again is safe; the sweep
does it only for work older than its task's usual run, and at most once per `REQUEUE_EVERY`
per item (noted in the shared cache, so several schedulers or a slow run do not pile copies
on the queue).

Effects and bulk jobs have their own sweeps (services/effects/sweep.py, bulk_jobs.py): they
keep their next check in the database.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.core.cache import cache
from django.db import models
from django.db.models import QuerySet
from django.utils import timezone

from reconcile_app.choices import ActivationStatus, CorrectionStatus, QuarantineStatus
from reconcile_app.models import ContractActivation, Correction, Quarantine

REQUEUE_EVERY = timedelta(minutes=5)
CACHE_PREFIX = "reconcile:requeued:"


@dataclass(frozen=True)
class LostWork:
    """One kind of one-shot work: which rows wait (`status`, started before a cut-off on
    `since`), and how to queue one again."""

    name: str
    model: type[models.Model]
    status: str
    since: str  # the row's start time field
    ref: str  # the field the task takes
    enqueue: Callable[[str], object]
    # Longer than the task's usual run: younger work may simply still be running.
    grace: timedelta

    def waiting(self, before: datetime) -> QuerySet[Any]:
        return self.model._default_manager.filter(
            status=self.status, **{f"{self.since}__lt": before}
        )


def _kinds() -> tuple[LostWork, ...]:
    from reconcile_app.tasks import (
        contract_activation_task,
        correction_complete_task,
        quarantine_apply_task,
    )

    return (
        LostWork(
            "quarantines",
            Quarantine,
            QuarantineStatus.APPLYING,
            "created_at",
            "quarantine_id",
            quarantine_apply_task.delay,
            timedelta(minutes=2),
        ),
        LostWork(
            "corrections",
            Correction,
            CorrectionStatus.COMPUTING,
            "created_at",
            "correction_id",
            correction_complete_task.delay,
            timedelta(minutes=2),
        ),
        # Release gates replay and drill: minutes on a large estate.
        LostWork(
            "activations",
            ContractActivation,
            ActivationStatus.RUNNING,
            "requested_at",
            "activation_id",
            contract_activation_task.delay,
            timedelta(minutes=10),
        ),
    )


def lost_work_sweep(*, now: datetime | None = None) -> dict[str, int]:
    """Queue again the one-shot work that has waited too long; returns how many of each."""
    now = now or timezone.now()
    counts: dict[str, int] = {}
    for kind in _kinds():
        counts[kind.name] = 0
        refs = kind.waiting(now - kind.grace).values_list(kind.ref, flat=True)[:500]
        for ref in refs:
            key = f"{CACHE_PREFIX}{kind.name}:{ref}"
            if cache.add(key, now.isoformat(), timeout=int(REQUEUE_EVERY.total_seconds())):
                kind.enqueue(ref)
                counts[kind.name] += 1
    return counts
