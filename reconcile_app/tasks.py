"""Celery tasks: each takes ids or nothing, calls one service, and is safe to run twice."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from reconcile_app.services.memory import fact_today, memories_expire


@shared_task(
    acks_late=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=5,
)
def expire_memories() -> int:
    """Scheduled: memory records past valid_until stop being current."""
    return memories_expire(today=fact_today())
