"""A drill whose worker died is run again when its message is delivered again (late acks):
the second attempt closes what the first one left open, as well as its own."""

from __future__ import annotations

from drills_app.choices import DrillRunStatus
from drills_app.runs import drill_run_execute
from reconcile_app.models import Contradiction, Escalation, Quarantine
from tests.drills_app.killed_run import run_killed_before_cleanup


def test_a_run_delivered_again_after_its_worker_died_closes_the_first_attempts_rows(
    db, monkeypatch, operator
):
    run = run_killed_before_cleanup(monkeypatch, operator.user)
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
