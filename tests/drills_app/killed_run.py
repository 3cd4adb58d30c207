"""A drill run whose worker died (SIGKILL) mid-trial, before its closing step: its
poisoned-memory quarantine never lifted, its escalation and contradiction left open."""

from __future__ import annotations

from typing import Any

import pytest

from drills_app import poisoned, scenarios
from drills_app.choices import DrillRunKind
from drills_app.models import DrillRun
from drills_app.runs import drill_run_execute, drill_run_start
from drills_app.scenarios import DrillParameters

PARAMETERS = DrillParameters(
    repeat=1, scenarios=("sources_disagree_valid_time", poisoned.NAME)
).as_dict()


class WorkerKilled(BaseException):
    """SIGKILL: nothing after it runs, neither `except Exception` nor the cleanup."""


def run_killed_before_cleanup(monkeypatch: pytest.MonkeyPatch, started_by: Any) -> DrillRun:
    run = drill_run_start(kind=DrillRunKind.DRILL, parameters=PARAMETERS, started_by=started_by)

    def killed(**kwargs: object) -> None:
        raise WorkerKilled

    with monkeypatch.context() as dying:
        dying.setattr(poisoned, "quarantine_lift", lambda **kwargs: None)
        dying.setattr(scenarios, "drill_rows_close", killed)
        with pytest.raises(WorkerKilled):
            drill_run_execute(run_id=run.pk)
    return run
