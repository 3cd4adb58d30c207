"""Which Celery queue each task goes to (docs/deploy.md, "Workers, per queue").

- `readbacks`: reading an effect back and resolving an unknown outcome, and the sweep that
  re-queues them. Agents wait on these (`wait` polls until verified); they are short and
  must never sit behind the long work below.
- `corrections`: a correction's blast radius and a quarantine's listing of what it affects:
  recursive lineage walks, long on a large estate.
- `drills`: drills and the drift benchmark, minutes of deliberate load.
- `default`: everything else (scheduled expiries, release gates of a contract activation).

A worker started without `-Q` consumes all four; a deployment can give each its own workers
(`celery -A config worker -Q readbacks`). Routes name tasks by their registered names, so a
task that moves module keeps its queue only if its name stays (drills_app's task does).
"""

from __future__ import annotations

READBACKS, CORRECTIONS, DRILLS, DEFAULT = "readbacks", "corrections", "drills", "default"
TASK_QUEUES = (READBACKS, CORRECTIONS, DRILLS, DEFAULT)

TASK_ROUTES: dict[str, dict[str, str]] = {
    "reconcile_app.tasks.effect_readback_task": {"queue": READBACKS},
    "reconcile_app.tasks.effect_resolve_task": {"queue": READBACKS},
    "reconcile_app.tasks.effects_sweep_task": {"queue": READBACKS},
    "reconcile_app.tasks.correction_complete_task": {"queue": CORRECTIONS},
    "reconcile_app.tasks.quarantine_apply_task": {"queue": CORRECTIONS},
    "reconcile_app.drills.tasks.execute_drill_run": {"queue": DRILLS},
}
