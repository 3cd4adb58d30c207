"""A reviewer deciding a drill's escalation while the drill closes its rows, on PostgreSQL.

The close rejects the drill's open escalations (their rows locked), then lifts the
quarantines its trials left on its memories, which moves the quarantine epoch. A decision
takes the epochs first (FOR SHARE, services/escalations.escalation_decide), then its
escalation's row. Taken the other way round by the close, the two waited on each other and
PostgreSQL broke the deadlock by failing one of them (a 500 for the reviewer, or the drill's
closing step). The close now takes the epochs first too: the decision waits, then finds the
escalation already decided.
"""

from __future__ import annotations

import pytest
from django.db import connection

from drills_app import cleanup, poisoned, scenarios
from drills_app.choices import DrillRunKind
from drills_app.runs import drill_run_execute, drill_run_start
from drills_app.scenarios import DrillParameters
from reconcile_app.errors import DomainError
from reconcile_app.models import Escalation, Principal, Quarantine
from reconcile_app.services.escalations import escalation_decide
from tests.races import paused_race

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]

PARAMETERS = DrillParameters(
    repeat=1, scenarios=("sources_disagree_valid_time", poisoned.NAME)
).as_dict()


class WorkerKilled(BaseException):
    """SIGKILL: nothing after it runs."""


def test_a_reviewer_deciding_a_drill_escalation_while_the_drill_closes_it(
    monkeypatch, operator, reviewer
):
    run = drill_run_start(kind=DrillRunKind.DRILL, parameters=PARAMETERS, started_by=operator.user)

    def killed(**kwargs: object) -> None:
        raise WorkerKilled

    with monkeypatch.context() as dying:
        # Killed mid-trial: its quarantine and its escalation are left open.
        dying.setattr(poisoned, "quarantine_lift", lambda **kwargs: None)
        dying.setattr(scenarios, "drill_rows_close", killed)
        with pytest.raises(WorkerKilled):
            drill_run_execute(run_id=run.pk)
    escalation = Escalation.objects.get(status="open")
    assert Quarantine.objects.filter(status="applied").exists()
    principal = Principal.objects.get(pk=escalation.requested_by_id)

    def decide() -> object:
        try:
            return escalation_decide(
                escalation_id=escalation.escalation_id,
                reviewer=reviewer.user,
                approve=False,
                rationale="not a real question",
            ).status
        except DomainError as refused:
            return refused.code

    seen = paused_race(
        monkeypatch,
        cleanup,
        "audit_record",  # the escalations rejected and locked; the quarantine not lifted yet
        lambda: cleanup.drill_rows_close(
            principal=principal, subjects=f"drill-{run.pk}r", note="closed by the drill"
        ).as_dict(),
        decide,
    )

    assert seen["write"] == {"escalations": 1, "contradictions": 1, "quarantines": 1}, seen
    assert seen["change"] == "already_decided", seen
    assert not Quarantine.objects.filter(status__in=["applying", "applied"]).exists()
