"""A reviewer deciding a drill's escalation while the drill closes its rows, on PostgreSQL.

The close lifted the quarantines its trials left on its memories (which moves the
quarantine epoch) after rejecting the drill's open escalations (their rows locked). A decision
takes the epochs first (FOR SHARE, services/escalations.escalation_decide), then its
escalation's row. Taken the other way round by the close, the two waited on each other and
PostgreSQL broke the deadlock by failing one of them (a 500 for the reviewer, or the drill's
closing step). The close now lifts the quarantines first: the decision waits, then finds the escalation
already decided.
"""

from __future__ import annotations

import pytest
from django.db import connection

from drills_app import cleanup
from reconcile_app.errors import DomainError
from reconcile_app.models import Escalation, Principal, Quarantine
from reconcile_app.services.escalations import escalation_decide
from tests.drills_app.killed_run import run_killed_before_cleanup
from tests.races import paused_race

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]


def test_a_reviewer_deciding_a_drill_escalation_while_the_drill_closes_it(
    monkeypatch, operator, reviewer
):
    # Killed mid-trial: its quarantine and its escalation are left open.
    run = run_killed_before_cleanup(monkeypatch, operator.user)
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
        "audit_record",  # the quarantine lifted; an escalation rejected, its row locked
        lambda: cleanup.drill_rows_close(
            principal=principal, subjects=f"drill-{run.pk}r", note="closed by the drill"
        ).as_dict(),
        decide,
    )

    assert seen["write"] == {"escalations": 1, "contradictions": 1, "quarantines": 1}, seen
    assert seen["change"] == "already_decided", seen
    assert not Quarantine.objects.filter(status__in=["applying", "applied"]).exists()
