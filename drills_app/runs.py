"""Stored runs of the drill and of the drift benchmark: start, progress, finish, read.

A run is started (status `running`) by the management commands, which execute it in-process,
or by `drill_run_enqueue`, which hands it to a Celery worker after the transaction commits.
`drill_run_execute` is the one body both paths share; it does nothing for a run that is no
longer running, so a redelivered task is harmless. Readers return plain dicts for charts.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from drills_app.choices import DrillRunKind, DrillRunStatus
from drills_app.models import DrillRun
from reconcile_app.canonical import rfc3339
from reconcile_app.choices import QuarantineScope
from reconcile_app.errors import Conflict, NotFound, ValidationFailed
from reconcile_app.limits import says_nothing
from reconcile_app.models import Quarantine
from reconcile_app.services.enqueue import enqueue_on_commit

logger = logging.getLogger(__name__)

# Drills inject faults into their own sandbox sources; two at once would trip each other's.
EXCLUSIVE_WINDOW = timedelta(minutes=15)
# The advisory lock two drill starts take turns on: "DRIL" in ASCII, a key no other lock of
# the product uses (the migration's is "RECO"; fact keys' are in a two-int key space).
START_LOCK = 0x4452494C


ABANDONED = (
    "abandoned: no worker finished it within {minutes} minutes (a killed worker, a lost "
    "message); other drills may have run since, so it was not started again"
)


def _abandoned_error() -> str:
    return ABANDONED.format(minutes=int(EXCLUSIVE_WINDOW.total_seconds() // 60))


# A run that said nothing for this long is executing nowhere: a worker's task is killed at
# CELERY_TASK_TIME_LIMIT (10 minutes), and a run going on reports progress as it goes.
SILENT_AFTER = timedelta(minutes=15)
# A run no worker has begun: the broker hands an unacknowledged message back after its
# visibility timeout (an hour); by then the one who asked has long stopped waiting.
UNTAKEN_AFTER = timedelta(minutes=60)


def _starts_held() -> None:
    """Inside the start's transaction: another start waits until this one commits, and then
    sees its run. Locking the running rows locks nothing when there are none (two starts
    both saw none and both ran); SQLite's IMMEDIATE transactions serialise writers anyway."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [START_LOCK])


def _quarantine_in_the_way() -> str | None:
    """What stops a drill meaning anything: a quarantine in force on one of its sources or the
    memory classes it writes. Its reads would come back `quarantined` and its writes 423, and
    the drill would report the protocol's refusals as escapes and failures (the drill gauge
    at 0) rather than name the quarantine."""
    from drills_app import poisoned, world
    from reconcile_app.services.quarantine import in_force

    held = (
        Quarantine.objects.filter(in_force())
        .filter(
            Q(scope=QuarantineScope.SOURCE, target__in=(world.CASE_SOURCE, world.COMPLAINTS_SOURCE))
            | Q(
                scope=QuarantineScope.MEMORY_CLASS,
                target__in=(world.MEMORY_CLASS, poisoned.MEMORY_CLASS),
            )
        )
        .order_by("created_at")
        .first()
    )
    if held is None:
        return None
    return (
        f"{held.scope.replace('_', ' ')} {held.target} is quarantined ({held.quarantine_id}): "
        "the drill reads and writes it; lift the quarantine, or wait for its end, to run one"
    )


def drill_run_start(*, kind: str, parameters: dict[str, Any], started_by: Any = None) -> DrillRun:
    if kind not in DrillRunKind.values:
        raise ValidationFailed(
            f"kind must be one of {', '.join(DrillRunKind.values)}", code="invalid_kind"
        )
    now = timezone.now()
    with transaction.atomic():
        if kind == DrillRunKind.DRILL:
            _starts_held()
            # A drill still "running" past its window is one no worker will finish: say so,
            # rather than showing it running for good.
            DrillRun.objects.filter(
                kind=kind, status=DrillRunStatus.RUNNING, started_at__lt=now - EXCLUSIVE_WINDOW
            ).update(status=DrillRunStatus.FAILED, error=_abandoned_error(), finished_at=now)
            busy = (
                DrillRun.objects.select_for_update()
                .filter(
                    kind=kind,
                    status=DrillRunStatus.RUNNING,
                    started_at__gte=now - EXCLUSIVE_WINDOW,
                )
                .values_list("pk", flat=True)
                .first()
            )
            if busy is not None:
                raise Conflict(
                    f"drill run #{busy} is still running; drills run one at a time",
                    code="drill_running",
                    run_id=busy,
                )
            in_the_way = _quarantine_in_the_way()
            if in_the_way is not None:
                raise Conflict(in_the_way, code="drill_quarantined")
        return DrillRun.objects.create(
            kind=kind,
            parameters=parameters,
            status=DrillRunStatus.RUNNING,
            started_at=now,
            started_by=started_by if getattr(started_by, "pk", None) else None,
        )


def drill_run_progress(*, run_id: int, done: int, total: int, stage: str = "") -> None:
    """How far the run got, and when it last said so (`at`: the sweep's sign of life)."""
    DrillRun.objects.filter(pk=run_id, status=DrillRunStatus.RUNNING).update(
        progress={"done": done, "total": total, "stage": stage, "at": timezone.now().isoformat()}
    )


def _last_sign_of_life(run: DrillRun) -> datetime | None:
    at = (run.progress or {}).get("at")
    return datetime.fromisoformat(at) if isinstance(at, str) else None


def drill_runs_abandoned_fail(*, now: datetime | None = None) -> int:
    """Scheduled: fail the runs nothing will finish, so none shows `running` for ever (its
    worker killed outright, its message lost with a broker restarted without persistence).
    A run begun and silent for SILENT_AFTER, or never begun after UNTAKEN_AFTER; a message
    that comes back later finds it failed and leaves it. Returns how many it failed."""
    now = now or timezone.now()
    failed = 0
    old = DrillRun.objects.filter(status=DrillRunStatus.RUNNING, started_at__lt=now - SILENT_AFTER)
    for run in old.only("pk", "progress", "started_at"):
        heard = _last_sign_of_life(run)
        if heard is not None and heard < now - SILENT_AFTER:
            error = (
                f"abandoned: it last reported progress at {rfc3339(heard)} and no "
                "worker is running it (killed, or its message lost); start it again"
            )
        elif heard is None and run.started_at < now - UNTAKEN_AFTER:
            minutes = int(UNTAKEN_AFTER.total_seconds() // 60)
            error = f"abandoned: no worker took it within {minutes} minutes; start it again"
        else:
            continue
        failed += DrillRun.objects.filter(pk=run.pk, status=DrillRunStatus.RUNNING).update(
            status=DrillRunStatus.FAILED, error=error, finished_at=now
        )
    return failed


def drill_run_finish(
    *, run_id: int, results: dict[str, Any], passed: bool | None = None
) -> DrillRun:
    """running → complete, once."""
    DrillRun.objects.filter(pk=run_id, status=DrillRunStatus.RUNNING).update(
        status=DrillRunStatus.COMPLETE,
        results=results,
        passed=passed,
        finished_at=timezone.now(),
    )
    return DrillRun.objects.get(pk=run_id)


def drill_run_fail(*, run_id: int, error: str) -> DrillRun:
    """running → failed, once; the error is kept for the console."""
    DrillRun.objects.filter(pk=run_id, status=DrillRunStatus.RUNNING).update(
        status=DrillRunStatus.FAILED, error=error[:5000], finished_at=timezone.now()
    )
    return DrillRun.objects.get(pk=run_id)


def _results_for(run: DrillRun) -> tuple[dict[str, Any], bool | None]:
    def progress(done: int, total: int, stage: str) -> None:
        drill_run_progress(run_id=run.pk, done=done, total=total, stage=stage)

    if run.kind == DrillRunKind.DRIFT_BENCHMARK:
        from drills_app.drift import DriftParameters, drift_benchmark_run

        return drift_benchmark_run(DriftParameters(**run.parameters), on_progress=progress), None
    from drills_app.scenarios import DrillParameters, drill_suite_run

    report = drill_suite_run(
        DrillParameters.from_dict(run.parameters),
        on_progress=progress,
        started_by=run.started_by,
        run_label=f"run #{run.pk}",
        run_id=run.pk,
    )
    return report, bool(report["passed"])


def drill_run_execute(*, run_id: int) -> DrillRun:
    """Run a stored run to its end; the same body for the commands and the Celery task."""
    run = DrillRun.objects.filter(pk=run_id).first()
    if run is None:
        raise NotFound(f"no drill run {run_id}", code="drill_run_not_found")
    if run.status != DrillRunStatus.RUNNING:
        return run
    if run.kind == DrillRunKind.DRILL and run.started_at < timezone.now() - EXCLUSIVE_WINDOW:
        # Its message came back late (a worker lost): the window that kept other drills off
        # the drill's sources has passed, and one may be running now.
        return drill_run_fail(run_id=run_id, error=_abandoned_error())
    if run.kind == DrillRunKind.DRILL and (in_the_way := _quarantine_in_the_way()) is not None:
        return drill_run_fail(run_id=run_id, error=in_the_way)  # placed since the start
    drill_run_progress(run_id=run_id, done=0, total=0, stage="starting")  # a worker took it
    try:
        results, passed = _results_for(run)
    except Exception as exc:
        logger.exception("drill run %s failed", run_id)
        return drill_run_fail(run_id=run_id, error=f"{type(exc).__name__}: {exc}")
    return drill_run_finish(run_id=run_id, results=results, passed=passed)


def drill_run_begin(
    *,
    kind: str,
    parameters: dict[str, Any],
    reason: str,
    started_by: Any = None,
    actor: Any = None,
    request_id: str = "",
) -> DrillRun:
    """Start a run with who started it, and why, on the audit trail (`drill.start`), in one
    transaction. `actor` names a starter with no account (`manage.py drill`); else the
    person `started_by`.

    Raises 400 `reason_required` without a reason, 409 while a drill runs."""
    from reconcile_app.services.audit import audit_record

    if says_nothing(reason):
        raise ValidationFailed("starting a run needs a reason", code="reason_required")
    with transaction.atomic():
        run = drill_run_start(kind=kind, parameters=parameters, started_by=started_by)
        # Drills inject faults into (drill) sources: who started one is on the record.
        audit_record(
            actor=actor or started_by,
            action="drill.start",
            object_kind="drill_run",
            object_ref=str(run.pk),
            reason=reason.strip(),
            request_id=request_id,
            after={"kind": kind, "parameters": parameters},
        )
    return run


def drill_run_enqueue(
    *,
    kind: str,
    parameters: dict[str, Any],
    reason: str,
    started_by: Any = None,
    request_id: str = "",
) -> DrillRun:
    """Start a run (drill_run_begin) and have a worker execute it once this transaction has
    committed."""
    from drills_app.tasks import execute_drill_run

    with transaction.atomic():
        run = drill_run_begin(
            kind=kind,
            parameters=parameters,
            reason=reason,
            started_by=started_by,
            request_id=request_id,
        )
        enqueue_on_commit(execute_drill_run, run.pk, swept=False)
    return run


def drill_run_as_dict(run: DrillRun) -> dict[str, Any]:
    """A run as plain JSON (times in RFC 3339), for the console's tables and charts."""
    return {
        "id": run.pk,
        "kind": run.kind,
        "status": run.status,
        "passed": run.passed,
        "parameters": run.parameters,
        "progress": run.progress,
        "results": run.results,
        "error": run.error,
        "started_at": rfc3339(run.started_at),
        "finished_at": rfc3339(run.finished_at),
        "started_by": run.started_by.get_username() if run.started_by is not None else None,
    }


def drill_runs_recent(*, kind: str | None = None, limit: int = 20) -> list[dict[str, Any]]:
    """The latest runs, newest first, as plain dicts (one query)."""
    runs = DrillRun.objects.select_related("started_by")
    if kind is not None:
        runs = runs.filter(kind=kind)
    return [drill_run_as_dict(run) for run in runs[:limit]]
