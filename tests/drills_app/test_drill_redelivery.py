"""A drill whose worker died is run again when its message is delivered again (late acks):
the second attempt closes what the first one left open, as well as its own."""

from __future__ import annotations

import pytest

from drills_app import poisoned, scenarios
from drills_app.choices import DrillRunKind, DrillRunStatus
from drills_app.runs import drill_run_execute, drill_run_start
from drills_app.scenarios import DrillParameters
from reconcile_app.models import Contradiction, Escalation, Quarantine

PARAMETERS = DrillParameters(
    repeat=1, scenarios=("sources_disagree_valid_time", poisoned.NAME)
).as_dict()


class WorkerKilled(BaseException):
    """SIGKILL: nothing after it runs, neither `except Exception` nor the cleanup."""


def test_a_run_delivered_again_after_its_worker_died_closes_the_first_attempts_rows(
    db, monkeypatch, operator
):
    run = drill_run_start(kind=DrillRunKind.DRILL, parameters=PARAMETERS, started_by=operator.user)

    def killed(**kwargs: object) -> None:
        raise WorkerKilled

    with monkeypatch.context() as dying:
        # Killed mid-trial (its quarantine never lifted), then before the closing step.
        dying.setattr(poisoned, "quarantine_lift", lambda **kwargs: None)
        dying.setattr(scenarios, "drill_rows_close", killed)
        with pytest.raises(WorkerKilled):
            drill_run_execute(run_id=run.pk)
    assert Escalation.objects.filter(status="open").count() == 1
    assert Contradiction.objects.filter(status="open").count() == 1
    left = Quarantine.objects.get(status="applied")

    finished = drill_run_execute(run_id=run.pk)  # the message, delivered again

    assert finished.status == DrillRunStatus.COMPLETE and finished.passed
    assert not Escalation.objects.filter(status="open").exists()
    assert not Contradiction.objects.filter(status="open").exists()
    assert not Quarantine.objects.filter(status__in=["applying", "applied"]).exists()
    assert finished.results["closed"] == {"escalations": 2, "contradictions": 2, "quarantines": 1}
    left.refresh_from_db()
    assert left.lifted_by is None and f"run #{run.pk}" in left.lift_reason
