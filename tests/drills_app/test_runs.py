"""Stored runs: started, executed by a Celery task after commit, finished once, readable."""

from __future__ import annotations

import pytest

from config.logs import request_id_var
from drills_app import drift, runs
from drills_app.choices import DrillRunKind, DrillRunStatus
from drills_app.models import DrillRun
from drills_app.runs import (
    drill_run_enqueue,
    drill_run_execute,
    drill_run_start,
    drill_runs_recent,
)
from drills_app.tasks import execute_drill_run
from reconcile_app.errors import NotFound, ValidationFailed
from reconcile_app.models import AuditEvent

BENCH = {"episodes": 20, "max_horizon": 3}


def test_enqueued_benchmark_runs_on_the_worker_after_commit(
    operator, eager_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        run = drill_run_enqueue(
            kind=DrillRunKind.DRIFT_BENCHMARK,
            parameters=BENCH,
            reason="weekly check",
            started_by=operator.user,
        )
        assert DrillRun.objects.get(pk=run.pk).status == DrillRunStatus.RUNNING
    assert len(callbacks) == 1
    run.refresh_from_db()
    assert run.status == DrillRunStatus.COMPLETE
    assert run.started_by == operator.user
    assert run.results["parameters"]["episodes"] == 20


def test_enqueued_drill_records_its_verdict(
    operator, eager_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        run = drill_run_enqueue(
            kind=DrillRunKind.DRILL,
            parameters={"repeat": 1, "scenarios": ["superseded_memory"]},
            reason="after the upgrade",
            started_by=operator.user,
        )
    run.refresh_from_db()
    assert run.status == DrillRunStatus.COMPLETE and run.passed is True
    assert run.progress | {"at": ""} == {
        "done": 1,
        "total": 1,
        "stage": "superseded_memory",
        "at": "",
    }


def test_a_redelivered_task_does_not_run_a_finished_run_again(db, monkeypatch):
    run = drill_run_start(kind=DrillRunKind.DRIFT_BENCHMARK, parameters=BENCH)
    assert execute_drill_run(run.pk) == DrillRunStatus.COMPLETE
    finished = DrillRun.objects.get(pk=run.pk).finished_at

    def must_not_run(*args, **kwargs):
        raise AssertionError("ran twice")

    monkeypatch.setattr(drift, "drift_benchmark_run", must_not_run)
    assert execute_drill_run(run.pk) == DrillRunStatus.COMPLETE
    assert DrillRun.objects.get(pk=run.pk).finished_at == finished


def test_a_run_that_raises_is_marked_failed_with_its_error(db, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("owner exploded")

    monkeypatch.setattr(drift, "drift_benchmark_run", broken)
    run = drill_run_execute(
        run_id=drill_run_start(kind=DrillRunKind.DRIFT_BENCHMARK, parameters=BENCH).pk
    )
    assert run.status == DrillRunStatus.FAILED
    assert run.error == "RuntimeError: owner exploded"
    assert run.finished_at is not None and run.results == {}


def test_unknown_kind_and_unknown_run_are_refused(db):
    with pytest.raises(ValidationFailed):
        drill_run_start(kind="fire", parameters={})
    with pytest.raises(NotFound):
        drill_run_execute(run_id=999)


def test_recent_runs_are_plain_dicts_newest_first(db, operator, django_assert_num_queries):
    first = drill_run_execute(
        run_id=drill_run_start(kind=DrillRunKind.DRIFT_BENCHMARK, parameters=BENCH).pk
    )
    second = drill_run_start(kind=DrillRunKind.DRILL, parameters={}, started_by=operator.user)
    with django_assert_num_queries(1):
        recent = drill_runs_recent()
    assert [item["id"] for item in recent] == [second.pk, first.pk]
    assert recent[0]["started_by"] == operator.user.username
    assert recent[1]["results"]["horizons"][0]["horizon"] == 2
    assert [item["id"] for item in drill_runs_recent(kind=DrillRunKind.DRILL)] == [second.pk]


def test_a_stale_running_drill_does_not_block_forever(db):
    stuck = drill_run_start(kind=DrillRunKind.DRILL, parameters={})
    DrillRun.objects.filter(pk=stuck.pk).update(
        started_at=stuck.started_at - runs.EXCLUSIVE_WINDOW * 2
    )
    assert drill_run_start(kind=DrillRunKind.DRILL, parameters={}).pk != stuck.pk
    # It is no longer shown running, and its message, delivered late, runs nothing now that
    # another drill may hold the sandbox.
    stuck.refresh_from_db()
    assert stuck.status == DrillRunStatus.FAILED and "abandoned" in stuck.error
    assert drill_run_execute(run_id=stuck.pk).status == DrillRunStatus.FAILED


def test_a_drill_delivered_after_its_window_runs_nothing(db, monkeypatch):
    late = drill_run_start(kind=DrillRunKind.DRILL, parameters={"repeat": 1})
    DrillRun.objects.filter(pk=late.pk).update(
        started_at=late.started_at - runs.EXCLUSIVE_WINDOW - runs.EXCLUSIVE_WINDOW / 15
    )
    ran = []
    monkeypatch.setattr(runs, "_results_for", lambda run: ran.append(run) or ({}, True))

    finished = drill_run_execute(run_id=late.pk)

    assert ran == []
    assert finished.status == DrillRunStatus.FAILED and "abandoned" in finished.error


def test_a_drills_audit_rows_lead_back_to_the_request_that_started_it(
    operator, eager_tasks, django_capture_on_commit_callbacks
):
    """The drill's own rows (its quarantine placed and lifted, what it closed) are the
    system's doing, under the request id the start ran under (carried into the task by
    config/celery.py): they used to carry none, tied to no start."""
    before = AuditEvent.objects.order_by("id").values_list("id", flat=True).last() or 0
    started_under = request_id_var.set("req-drill-7")
    try:
        with django_capture_on_commit_callbacks(execute=True):
            run = drill_run_enqueue(
                kind=DrillRunKind.DRILL,
                parameters={"repeat": 1, "scenarios": ["poisoned_memory"]},
                reason="after the upgrade",
                started_by=operator.user,
            )
    finally:
        request_id_var.reset(started_under)
    run.refresh_from_db()
    assert run.status == DrillRunStatus.COMPLETE, run.error
    rows = AuditEvent.objects.filter(actor_name="system", id__gt=before)
    assert {"quarantine.create", "quarantine.lift"} <= set(rows.values_list("action", flat=True))
    assert set(rows.values_list("request_id", flat=True)) == {"req-drill-7"}
