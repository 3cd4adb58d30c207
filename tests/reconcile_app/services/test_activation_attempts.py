"""An activation whose gates kill the worker running them ends, rather than crashing every
worker that takes it for ever: each start is counted in the database before the gates run,
and past ACTIVATION_ATTEMPTS_MAX starts the activation fails, saying why, with nothing live.
A start within the task time limit of the last one is another copy of the task while the
first may still be running: it leaves the run alone."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from reconcile_app.models import AuditEvent, ContractActivation
from reconcile_app.services import contract_lifecycle
from reconcile_app.services.contract_lifecycle import (
    ACTIVATION_ATTEMPTS_MAX,
    contract_activation_run,
)
from tests.conftest import COLLECTIONS
from tests.reconcile_app.api.test_contract_lifecycle import (
    DENIES_COLLECT,
    activate,
    load,
    status_of,
)


class WorkerLost(BaseException):
    """What the worker's death looks like from inside the run: nothing after it executes
    (not an Exception: the run's own `except Exception` never sees a SIGSEGV or SIGKILL)."""


def test_gates_that_kill_their_worker_fail_the_activation_after_a_few_starts(
    estate, reviewer, tmp_path, monkeypatch, django_capture_on_commit_callbacks
):
    load(tmp_path, DENIES_COLLECT, "next.yaml", "--draft")
    with django_capture_on_commit_callbacks(execute=False):
        asked = activate(reviewer, "7.4", "7.4 denies collectible accounts")
    activation_id = asked.json()["activation_id"]
    started: list[str] = []

    def dies(contract, *, level):
        started.append(contract.version)
        raise WorkerLost

    monkeypatch.setattr(contract_lifecycle, "release_gates_run", dies)
    for _ in range(ACTIVATION_ATTEMPTS_MAX):  # each copy the sweep queues crashes its worker
        with pytest.raises(WorkerLost):
            contract_activation_run(activation_id=activation_id)
        past_the_task_time_limit(activation_id)
    assert ContractActivation.objects.get(activation_id=activation_id).status == "running"

    ended = contract_activation_run(activation_id=activation_id)

    assert len(started) == ACTIVATION_ATTEMPTS_MAX  # the last delivery never ran the gates
    assert (ended.status, ended.attempts) == ("failed", ACTIVATION_ATTEMPTS_MAX + 1)
    assert f"started {ACTIVATION_ATTEMPTS_MAX} times and never finished" in ended.detail
    assert (status_of("7.3"), status_of("7.4")) == ("active", "draft")
    refused = AuditEvent.objects.filter(action="contract.activation_refused").last()
    assert refused is not None and refused.object_ref == f"{COLLECTIONS}@7.4"
    # A later delivery (the sweep, a late redelivery) finds it finished and changes nothing.
    assert contract_activation_run(activation_id=activation_id).attempts == ended.attempts


def test_a_second_copy_while_the_first_may_still_run_leaves_the_run_to_it(
    estate, reviewer, tmp_path, monkeypatch, django_capture_on_commit_callbacks
):
    """The lost-work sweep re-queues a `running` activation behind a busy queue: copies taken
    while a start is within the task time limit neither run the gates again nor count as a
    lost worker (four such copies failed a healthy run)."""
    load(tmp_path, DENIES_COLLECT, "next.yaml", "--draft")
    with django_capture_on_commit_callbacks(execute=False):
        asked = activate(reviewer, "7.4", "7.4 denies collectible accounts")
    activation_id = asked.json()["activation_id"]
    ContractActivation.objects.filter(activation_id=activation_id).update(
        attempts=1, attempt_started_at=timezone.now() - timedelta(minutes=9)
    )
    ran: list[str] = []
    monkeypatch.setattr(
        contract_lifecycle, "release_gates_run", lambda contract, *, level: ran.append("gates")
    )

    for _ in range(ACTIVATION_ATTEMPTS_MAX + 1):
        copy = contract_activation_run(activation_id=activation_id)

    assert (ran, copy.status, copy.attempts) == ([], "running", 1)


def past_the_task_time_limit(activation_id: str) -> None:
    """The start's worker is gone: Celery's hard time limit has passed since it began."""
    ContractActivation.objects.filter(activation_id=activation_id).update(
        attempt_started_at=timezone.now() - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT + 1)
    )


def test_an_activation_that_finishes_counts_one_start(
    estate, reviewer, tmp_path, django_capture_on_commit_callbacks
):
    load(tmp_path, DENIES_COLLECT, "next.yaml", "--draft")
    with django_capture_on_commit_callbacks(execute=False):
        asked = activate(reviewer, "7.4", "7.4 denies collectible accounts")

    finished = contract_activation_run(activation_id=asked.json()["activation_id"])

    assert (finished.status, finished.attempts) == ("activated", 1)
