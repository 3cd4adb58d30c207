"""A drill is not run on what a quarantine holds: its reads would come back `quarantined` and
its writes 423, and it reported the protocol's refusals as escapes and failures (the drill
gauge at 0) rather than naming the quarantine."""

from __future__ import annotations

import pytest

from drills_app.choices import DrillRunKind, DrillRunStatus
from drills_app.models import DrillRun
from drills_app.runs import drill_run_execute, drill_run_start
from reconcile_app.errors import Conflict
from reconcile_app.services.quarantine import quarantine_create, quarantine_lift
from tests.drills_app.test_views import DRILL_POST


def quarantine_episodic(operator):
    return quarantine_create(
        scope="memory_class", target="episodic", reason="a bad summariser", actor=operator.user
    )


def test_a_drill_is_refused_while_a_class_it_writes_is_quarantined(operator, operator_browser):
    held = quarantine_episodic(operator)

    response = operator_browser.post("/drills/", DRILL_POST)

    assert response.status_code == 409
    assert f"memory class episodic is quarantined ({held.quarantine_id})" in (
        response.content.decode()
    )
    assert not DrillRun.objects.exists()


def test_the_drift_benchmark_runs_whatever_is_quarantined(operator):
    quarantine_episodic(operator)
    run = drill_run_start(kind=DrillRunKind.DRIFT_BENCHMARK, parameters={"episodes": 5})
    assert run.status == DrillRunStatus.RUNNING


def test_a_quarantine_placed_after_the_start_fails_the_run_naming_it(operator):
    run = drill_run_start(kind=DrillRunKind.DRILL, parameters={"repeat": 1})
    held = quarantine_episodic(operator)

    finished = drill_run_execute(run_id=run.pk)

    assert finished.status == DrillRunStatus.FAILED and finished.passed is None
    assert held.quarantine_id in finished.error
    assert finished.results in (None, {}), "nothing ran"


def test_once_lifted_the_drill_starts(operator):
    held = quarantine_episodic(operator)
    with pytest.raises(Conflict) as refused:
        drill_run_start(kind=DrillRunKind.DRILL, parameters={"repeat": 1})
    assert refused.value.code == "drill_quarantined"
    quarantine_lift(quarantine_id=held.quarantine_id, reason="fixed", actor=operator.user)
    assert drill_run_start(kind=DrillRunKind.DRILL, parameters={"repeat": 1}).pk
