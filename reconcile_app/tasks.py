"""Celery tasks: each takes ids or nothing, calls one service, and is safe to run twice.

Tasks are named `<service>_task`: the task is the queued form of the service it calls.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import OperationalError

from reconcile_app.services.effects import (
    OwnerUnavailable,
    effect_check_failed,
    effect_readback,
    effect_resolve_unknown,
    effects_sweep,
)
from reconcile_app.services.memory import fact_today, memories_expire
from reconcile_app.services.person_access import sessions_expired_clear

# Tasks that ask an owner: limits of their own (docs/deploy.md, "Workers, per queue"). The hard
# one leaves 30 s for the task to end cleanly after the soft one.
OWNER_TASK_LIMITS = {
    "soft_time_limit": settings.RECONCILE_OWNER_TASK_SOFT_TIME_LIMIT,
    "time_limit": settings.RECONCILE_OWNER_TASK_SOFT_TIME_LIMIT + 30,
}


# Scheduled housekeeping: retried on a database hiccup, and run again by the next beat anyway.
HOUSEKEEPING = {
    "acks_late": True,
    "autoretry_for": (OperationalError,),
    "retry_backoff": True,
    "retry_backoff_max": 300,
    "max_retries": 5,
}


@shared_task(**HOUSEKEEPING)
def memories_expire_task() -> int:
    """Scheduled: memory records past valid_until stop being current."""
    return memories_expire(today=fact_today())


@shared_task(**HOUSEKEEPING)
def sessions_expired_clear_task() -> int:
    """Scheduled: console sessions past their expiry are deleted."""
    return sessions_expired_clear()


@shared_task(
    acks_late=True,
    autoretry_for=(OwnerUnavailable, OperationalError),
    retry_backoff=2,
    retry_backoff_max=300,
    retry_jitter=True,
    max_retries=12,
    **OWNER_TASK_LIMITS,
)
def effect_readback_task(effect_id: int) -> str:
    """Read the target back and record verified / postcondition_failed. Safe to repeat."""
    with _noted_if_cut_short(effect_id, "readback"):
        return effect_readback(effect_id=effect_id).status


@shared_task(
    acks_late=True,
    autoretry_for=(OperationalError,),
    retry_backoff=2,
    retry_backoff_max=300,
    max_retries=5,
    **OWNER_TASK_LIMITS,
)
def effect_resolve_task(effect_id: int) -> str:
    """Ask the owner's ledger about an unknown outcome. Safe to repeat; never re-sends."""
    with _noted_if_cut_short(effect_id, "resolution"):
        return effect_resolve_unknown(effect_id=effect_id).status


@contextmanager
def _noted_if_cut_short(effect_id: int, check: str) -> Iterator[None]:
    """A check cut short at its time limit writes nothing of its own: say so on the effect
    (its page shows the last check's error) before the task fails. The sweep asks again."""
    try:
        yield
    except SoftTimeLimitExceeded:
        effect_check_failed(effect_id, f"{check} cut short at its time limit; the sweep asks again")
        raise


@shared_task(acks_late=True)
def effects_sweep_task() -> dict[str, int]:
    """Scheduled: re-enqueue readbacks and resolutions whose task may have been lost."""
    from config.heartbeat import sweep_ran_record

    counts = effects_sweep()
    sweep_ran_record()  # /metrics: scheduling is alive
    return counts


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5)
def correction_complete_task(correction_id: str) -> dict[str, int]:
    """Large blast radii are computed here rather than in the request. Idempotent."""
    from reconcile_app.services.corrections import correction_complete

    return correction_complete(correction_id=correction_id).counts


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5)
def quarantine_apply_task(quarantine_id: str) -> str:
    """List what a new quarantine affects. Idempotent: a redelivery changes nothing twice."""
    from reconcile_app.services.quarantine import quarantine_apply

    return quarantine_apply(quarantine_id=quarantine_id).status


@shared_task(acks_late=True)
def lost_work_sweep_task() -> dict[str, int]:
    """Scheduled: queue again quarantines, corrections and activations whose task was lost."""
    from reconcile_app.services.lost_work import lost_work_sweep

    return lost_work_sweep()


@shared_task(acks_late=True)
def quarantines_expire_task() -> int:
    """Scheduled: lift quarantines whose end time has passed."""
    from reconcile_app.services.quarantine import quarantines_expire

    return quarantines_expire()


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5)
def contract_activation_task(activation_id: str) -> str:
    """Run a version's release gates, then activate it or refuse. A redelivery of a finished
    activation changes nothing."""
    from reconcile_app.services.contract_lifecycle import contract_activation_run

    return contract_activation_run(activation_id=activation_id).status


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5)
def bulk_job_run_task(job_id: str) -> str:
    """One operator's bulk triage: every item in its own transaction. A redelivery carries on
    from the items still pending; nothing concluded is redone."""
    from reconcile_app.services.bulk_jobs import bulk_job_run

    return bulk_job_run(job_id=job_id).status


@shared_task(acks_late=True)
def bulk_jobs_sweep_task() -> int:
    """Scheduled: queue again the bulk jobs whose task was lost (running, heartbeat stale)."""
    from reconcile_app.services.bulk_jobs import bulk_jobs_sweep

    return bulk_jobs_sweep()
