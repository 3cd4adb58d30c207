"""A bulk job outlives its task: the sweep queues a job whose task was lost, and a long job
runs as a chain of bounded runs. Either way every item is acted on once."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import OperationalError
from django.utils import timezone

from reconcile_app.models import AuditEvent, BulkJob, Effect
from reconcile_app.services import bulk_items
from reconcile_app.services.bulk_jobs import (
    BULK_JOB_STALE_SECONDS,
    bulk_job_create,
    bulk_job_run,
    bulk_jobs_sweep,
)
from sandbox_app.models import SandboxEffect
from tests.reconcile_app.console.conftest import commit_effect

STALE = timedelta(seconds=BULK_JOB_STALE_SECONDS + 1)


@pytest.fixture
def unknowns(estate: Any, agent: Any) -> list[Effect]:
    effects = [commit_effect(agent, f"sw-{n}", fault="timeout_after_commit") for n in range(3)]
    assert {effect.status for effect in effects} == {"unknown"}
    return effects


@pytest.fixture
def queued(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The job ids sent to the broker (instead of running them)."""
    sent: list[str] = []
    from reconcile_app import tasks

    monkeypatch.setattr(tasks.bulk_job_run_task, "delay", sent.append)
    return sent


def make_job(operator: Any, effects: list[Effect]) -> BulkJob:
    return bulk_job_create(
        actor=operator.user,
        action="readback",
        keys=[effect.idempotency_key for effect in effects],
        reason="owner outage",
        request_id="req-sweep",
    )


def age(job: BulkJob, by: timedelta) -> None:
    BulkJob.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - by)


def test_the_sweep_requeues_a_running_job_gone_quiet_and_not_a_fresh_or_finished_one(
    unknowns, operator, queued, django_capture_on_commit_callbacks
):
    stale, fresh, finished = (make_job(operator, [effect]) for effect in unknowns)
    bulk_job_run(job_id=finished.job_id)
    age(stale, STALE)
    age(finished, STALE)
    # A fresh job whose heartbeat is just inside the threshold is still being worked on.
    age(fresh, STALE - timedelta(seconds=5))

    with django_capture_on_commit_callbacks(execute=True):
        assert bulk_jobs_sweep() == 1

    assert queued == [stale.job_id]
    stale.refresh_from_db()
    assert stale.requeues == 1
    assert timezone.now() - stale.heartbeat_at < timedelta(seconds=5)
    # Its heartbeat moved with the re-queue: the next sweep leaves it to the queued task.
    with django_capture_on_commit_callbacks(execute=True):
        assert bulk_jobs_sweep() == 0
    assert queued == [stale.job_id]
    assert BulkJob.objects.get(pk=finished.pk).requeues == 0


def test_a_job_whose_task_died_midway_ends_with_correct_counts_once_swept(
    unknowns, operator, monkeypatch, eager_tasks, django_capture_on_commit_callbacks
):
    job = make_job(operator, unknowns)
    real = bulk_items.effect_resolve_unknown
    calls = {"n": 0}

    def dies_on_the_second(*, effect_id: int) -> Effect:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OperationalError("server closed the connection unexpectedly")
        return real(effect_id=effect_id)

    monkeypatch.setattr(bulk_items, "effect_resolve_unknown", dies_on_the_second)
    with pytest.raises(OperationalError):
        bulk_job_run(job_id=job.job_id)
    job.refresh_from_db()
    assert (job.status, job.done, job.failed) == ("running", 1, 0)

    # The task is gone (no retry came); the sweep finds the job quiet and queues it again.
    age(job, STALE)
    with django_capture_on_commit_callbacks(execute=True):
        assert bulk_jobs_sweep() == 1

    job.refresh_from_db()
    assert (job.status, job.count, job.done, job.failed, job.skipped) == ("done", 3, 3, 0, 0)
    assert job.requeues == 1
    keys = [effect.idempotency_key for effect in unknowns]
    assert set(
        Effect.objects.filter(idempotency_key__in=keys).values_list("status", flat=True)
    ) == {"verified"}
    # Each effect applied once by the owner, and re-checked once in the audit log.
    assert SandboxEffect.objects.filter(idempotency_key__in=keys).count() == 3
    checks = AuditEvent.objects.filter(action="effect.readback")
    assert sorted(checks.values_list("object_ref", flat=True)) == sorted(keys)
    assert set(checks.values_list("request_id", flat=True)) == {"req-sweep"}


def test_a_run_over_its_budget_stops_between_items_and_queues_the_rest(
    unknowns, operator, queued, django_capture_on_commit_callbacks
):
    job = make_job(operator, unknowns)
    with django_capture_on_commit_callbacks(execute=True):
        job = bulk_job_run(job_id=job.job_id, budget_seconds=0)
    # One item per run at the least, then the next run is queued.
    assert (job.status, job.done) == ("running", 1)
    assert queued == [job.job_id]
    job = bulk_job_run(job_id=job.job_id)
    assert (job.status, job.done, job.failed) == ("done", 3, 0)
