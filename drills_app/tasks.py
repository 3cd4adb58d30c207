"""Celery tasks for drills and the drift benchmark: each takes a run id and calls one service.

Celery's autodiscovery registers this module (drills_app is an installed app).
"""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from drills_app.runs import drill_run_execute, drill_runs_abandoned_fail

__all__ = ["drill_runs_abandoned_fail_task", "execute_drill_run"]


@shared_task(
    # The name messages carry: kept from when the task lived in reconcile_app/drills/, so a
    # run queued before an upgrade is still executed by an upgraded worker.
    name="reconcile_app.drills.tasks.execute_drill_run",
    acks_late=True,
    autoretry_for=(OperationalError,),
    retry_backoff=5,
    retry_backoff_max=120,
    max_retries=3,
)
def execute_drill_run(run_id: int) -> str:
    """Run a stored drill or benchmark to its end. A run no longer `running` is left alone."""
    return drill_run_execute(run_id=run_id).status


@shared_task(acks_late=True)
def drill_runs_abandoned_fail_task() -> int:
    """Scheduled: fail the drill and benchmark runs no worker will finish."""
    return drill_runs_abandoned_fail()
