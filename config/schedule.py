"""What the scheduler (`celery beat`, exactly one per deployment) sends, and how often.

Each task is a sweep or an expiry, idempotent, and queued by its route (config/queues.py). A
sweep not taken within ten of its periods is dropped (`expires`): workers back after an
outage find ten identical sweeps queued, not hundreds, while a queue merely busy (the effects
sweep shares `readbacks`) still gets to one well before it expires.
"""

from __future__ import annotations

SCHEDULED_TASK_EXPIRES_PERIODS = 10


def _every(seconds: float, task: str) -> dict[str, object]:
    expires = SCHEDULED_TASK_EXPIRES_PERIODS * seconds
    return {"task": task, "schedule": seconds, "options": {"expires": expires}}


def beat_schedule(
    *, sweep_effects_every: float, expire_memories_every: float
) -> dict[str, dict[str, object]]:
    return {
        "sweep-effects": _every(sweep_effects_every, "reconcile_app.tasks.effects_sweep_task"),
        "sweep-bulk-jobs": _every(sweep_effects_every, "reconcile_app.tasks.bulk_jobs_sweep_task"),
        "sweep-lost-work": _every(60.0, "reconcile_app.tasks.lost_work_sweep_task"),
        "fail-abandoned-drill-runs": _every(
            60.0, "drills_app.tasks.drill_runs_abandoned_fail_task"
        ),
        "expire-quarantines": _every(60.0, "reconcile_app.tasks.quarantines_expire_task"),
        "expire-memories": _every(
            expire_memories_every, "reconcile_app.tasks.memories_expire_task"
        ),
        # Each console sign-in leaves a django_session row that Django never deletes itself.
        "clear-expired-sessions": _every(3600.0, "reconcile_app.tasks.sessions_expired_clear_task"),
    }
