"""A run whose worker was lost outright (main process and child killed, or its message lost
with a broker restarted without persistence) is failed by the scheduled sweep instead of
showing `running` for ever: begun and silent for SILENT_AFTER, or never taken by a worker
within UNTAKEN_AFTER. A run still reporting progress, or still waiting its turn, is left."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from drills_app.choices import DrillRunKind, DrillRunStatus
from drills_app.models import DrillRun
from drills_app.runs import (
    SILENT_AFTER,
    UNTAKEN_AFTER,
    drill_run_execute,
    drill_run_progress,
    drill_runs_abandoned_fail,
)
from drills_app.tasks import drill_runs_abandoned_fail_task

BENCH = {"episodes": 20, "max_horizon": 3}
NOW = timezone.now()


def run_of(started: timedelta, heard: timedelta | None = None) -> DrillRun:
    """A benchmark run started `started` ago that last reported progress `heard` ago."""
    progress = {} if heard is None else {"done": 3, "total": 40, "at": (NOW - heard).isoformat()}
    return DrillRun.objects.create(
        kind=DrillRunKind.DRIFT_BENCHMARK,
        parameters=BENCH,
        started_at=NOW - started,
        progress=progress,
    )


def status_of(run: DrillRun) -> str:
    run.refresh_from_db()
    return run.status


def test_only_the_runs_nothing_will_finish_are_failed(db):
    silent = run_of(timedelta(minutes=40), heard=SILENT_AFTER + timedelta(seconds=1))
    untaken = run_of(UNTAKEN_AFTER + timedelta(seconds=1))
    reporting = run_of(timedelta(minutes=40), heard=timedelta(minutes=2))
    queued = run_of(UNTAKEN_AFTER - timedelta(minutes=1))
    young = run_of(timedelta(minutes=3), heard=timedelta(minutes=3))

    assert drill_runs_abandoned_fail(now=NOW) == 2

    assert (status_of(silent), status_of(untaken)) == ("failed", "failed")
    assert "last reported progress at" in silent.error and silent.finished_at == NOW
    assert "no worker took it within 60 minutes" in untaken.error
    assert {status_of(run) for run in (reporting, queued, young)} == {"running"}
    assert drill_runs_abandoned_fail(now=NOW) == 0  # once


def test_a_message_that_comes_back_later_leaves_the_failed_run_alone(db):
    untaken = run_of(UNTAKEN_AFTER + timedelta(minutes=5))
    drill_runs_abandoned_fail_task()

    late = drill_run_execute(run_id=untaken.pk)  # the broker hands the message back

    assert (late.status, late.results) == (DrillRunStatus.FAILED, {})


def test_progress_and_a_worker_taking_the_run_are_signs_of_life(db):
    run = run_of(timedelta(seconds=0))
    drill_run_progress(run_id=run.pk, done=1, total=40, stage="episodes")
    run.refresh_from_db()
    heard = datetime.fromisoformat(run.progress["at"])
    assert timezone.now() - heard < timedelta(seconds=5)
    # Run to its end: it completes, and nothing the sweep does later touches it.
    assert drill_run_execute(run_id=run.pk).status == DrillRunStatus.COMPLETE
    assert drill_runs_abandoned_fail(now=timezone.now() + UNTAKEN_AFTER * 2) == 0
