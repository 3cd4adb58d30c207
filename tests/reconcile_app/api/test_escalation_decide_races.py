"""A reviewer's decision against a change of who may decide, forced in between (PostgreSQL).

The role was checked before the decision's transaction and never again: a reviewer whose role
was taken away just then still approved or rejected, as if it had not been."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.db import connection

from reconcile_app.services import escalations as escalations_module
from reconcile_app.services.escalations import escalation_decide, escalation_open_for_fact
from tests.conftest import make_person
from tests.races import paused_race

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]


def test_a_reviewer_whose_role_is_taken_away_meanwhile_decides_nothing(estate, monkeypatch):
    escalation = escalation_open_for_fact(
        code="authority_ambiguous",
        fact_key="baseline.race-eval",
        candidate_refs=["rec-a", "rec-b"],
        authority_owner="eval-registry",
        requested_by=None,
    )
    reviewer = make_person("rhys-reviewer", "reviewer")

    def role_taken_away() -> None:
        reviewer.user.groups.remove(Group.objects.get(name="reviewer"))

    seen = paused_race(
        monkeypatch,
        escalations_module,
        "has_role",
        lambda: (
            escalation_decide(
                escalation_id=escalation.escalation_id,
                reviewer=reviewer.user,
                approve=False,
                rationale="neither is registered",
            ).status
        ),
        role_taken_away,
    )
    assert seen["write"] == "forbidden", seen
    escalation.refresh_from_db()
    assert (escalation.status, escalation.decided_by_id) == ("open", None)
