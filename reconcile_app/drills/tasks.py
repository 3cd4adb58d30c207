"""Celery tasks for drills and the drift benchmark: each takes a run id and calls one service.

Celery's autodiscovery imports each app's `tasks.py` only; this module is listed in
CELERY_IMPORTS (config/settings.py) so a worker registers it too.
"""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from reconcile_app.drills.runs import drill_run_execute

__all__ = ["execute_drill_run"]


@shared_task(
    acks_late=True,
    autoretry_for=(OperationalError,),
    retry_backoff=5,
    retry_backoff_max=120,
    max_retries=3,
)
def execute_drill_run(run_id: int) -> str:
    """Run a stored drill or benchmark to its end. A run no longer `running` is left alone."""
    return drill_run_execute(run_id=run_id).status
