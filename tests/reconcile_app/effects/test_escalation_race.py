"""Two operators escalating one unresolved effect at once (PostgreSQL).

The open escalation was looked for without a lock on the effect: both requests found none and
each opened its own, so the owner was asked twice and the audit named two escalations."""

from __future__ import annotations

import pytest
from django.db import connection

from reconcile_app.models import AuditEvent, Escalation
from reconcile_app.services import effect_escalations as effect_escalations_module
from reconcile_app.services.effect_escalations import escalation_open_for_effect
from sandbox_app.services import sandbox_fault_add
from tests.races import paused_race
from tests.reconcile_app.effects.conftest import commit, reconcile

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]


def test_two_operators_escalating_at_once_open_one_escalation(
    collectible, agent, operator, monkeypatch
):
    snapshot = reconcile(agent)
    sandbox_fault_add(source="case-service", kind="timeout_after_commit", count=1)
    assert commit(agent, snapshot, "release_collections_hold", "released", "u-1").status_code == 202

    def escalate(reason: str) -> str:
        return escalation_open_for_effect(
            idempotency_key="u-1", actor=operator.user, reason=reason
        ).escalation_id

    seen = paused_race(
        monkeypatch,
        effect_escalations_module,
        "new_escalation_id",
        lambda: escalate("ledger unreachable"),
        lambda: escalate("no answer by phone"),
    )

    assert seen["write"] == seen["change"], seen
    assert Escalation.objects.filter(effect__idempotency_key="u-1").count() == 1
    assert AuditEvent.objects.filter(action="effect.escalate").count() == 1
