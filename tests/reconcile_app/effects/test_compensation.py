"""Compensation: an operator undoes an applied effect through the same gate, in their name."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection, connections

from reconcile_app.errors import Conflict
from reconcile_app.models import AuditEvent, DecisionSnapshot, Effect, EffectEvent
from reconcile_app.services.effects import compensation, effect_compensate, effect_readback
from reconcile_app.services.evidence import evidence_append
from sandbox_app.models import SandboxEffect, SandboxRecord
from sandbox_app.services import sandbox_record_write
from tests.conftest import ago
from tests.reconcile_app.effects.conftest import SUBJECT, account_goes_on_hold, commit, reconcile

COMPENSATE = {
    "action": "retain_manual_review",
    "resulting_value": "manual_review",
    "reason": "released by mistake: the customer asked for manual review",
}


@pytest.fixture
def applied(collectible, agent) -> Effect:
    """The agent released account-17 (read back: verified); the owner's ledger evidences it."""
    snapshot = reconcile(agent)
    assert commit(agent, snapshot, "release_collections_hold", "released", "r-1").status_code == 201
    effect = effect_readback(effect_id=Effect.objects.get(idempotency_key="r-1").pk)
    assert effect.status == "verified"
    # The contract requires evidence for the field's current value, as for any reconcile.
    evidence_append(
        kind="observation",
        subject=SUBJECT,
        field="collections_status",
        value="released",
        source="case-ledger",
        observed_at=ago(seconds=1),
    )
    return effect


def owner_value() -> tuple[Any, int]:
    record = SandboxRecord.objects.get(
        source="case-service", subject=SUBJECT, field="collections_status"
    )
    return record.value, record.version


def test_compensation_is_reconciled_and_committed_in_the_operators_name(applied, operator):
    response = operator.post(f"/api/v1/effects/{applied.idempotency_key}/compensate", COMPENSATE)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["compensates"] == "r-1"
    assert body["principal"] == operator.name
    assert body["status"] == "accepted"
    assert body["idempotency_key"] != "r-1"
    assert body["expected_version"] == 43  # the version its own snapshot read
    # Its own snapshot, issued to the operator's person principal, that allowed the action.
    snapshot = DecisionSnapshot.objects.get(snapshot_id=body["snapshot_id"])
    assert snapshot.principal == operator.principal
    assert snapshot.content["decision"]["result"] == "allow"
    assert snapshot.snapshot_id != applied.snapshot.snapshot_id
    # The owner executed it once, under the new key, against the version read.
    assert owner_value() == ("manual_review", 44)
    assert SandboxEffect.objects.filter(idempotency_key=body["idempotency_key"]).count() == 1
    original = operator.get("/api/v1/effects/r-1").json()
    assert original["compensated_by"] == body["idempotency_key"]
    assert original["compensates"] is None
    assert operator.get(f"/api/v1/effects/{body['idempotency_key']}").json()["compensates"] == "r-1"


def test_compensation_is_audited_on_both_effects_with_the_reason(applied, operator):
    response = operator.post("/api/v1/effects/r-1/compensate", COMPENSATE, HTTP_X_REQUEST_ID="rq-9")
    new_key = response.json()["idempotency_key"]
    rows = AuditEvent.objects.filter(action="effect.compensate").order_by("object_ref")
    assert {row.object_ref for row in rows} == {"r-1", new_key}
    for row in rows:
        assert (row.actor_name, row.reason) == (operator.name, COMPENSATE["reason"])
        assert row.request_id
    assert len({row.request_id for row in rows}) == 1
    event = EffectEvent.objects.get(effect=applied, kind="compensated")
    assert (event.detail["by"], event.actor) == (new_key, operator.name)


def test_compensation_the_policy_does_not_allow_is_refused(applied, operator):
    # Hardship since: the policy denies any action on the account.
    account_goes_on_hold(observed_at=ago(seconds=1))
    before = owner_value()
    response = operator.post("/api/v1/effects/r-1/compensate", COMPENSATE)
    assert (response.status_code, response.json()["code"]) == (403, "decision_not_allowed")
    # The refusal names the operator's own snapshot, whose policy said no.
    refused = DecisionSnapshot.objects.get(snapshot_id=response.json()["snapshot_id"])
    assert refused.principal == operator.principal
    assert refused.content["decision"]["result"] == "deny"
    assert "hardship_hold" in response.json()["detail"]
    assert owner_value() == before
    assert not Effect.objects.filter(compensates=applied).exists()
    assert not AuditEvent.objects.filter(action="effect.compensate").exists()
    assert operator.get("/api/v1/effects/r-1").json()["compensated_by"] is None


def test_compensation_needs_a_reason_an_effect_and_an_operator(applied, operator, auditor, agent):
    no_reason = operator.post("/api/v1/effects/r-1/compensate", {**COMPENSATE, "reason": ""})
    assert no_reason.status_code == 400
    missing = operator.post("/api/v1/effects/nope/compensate", COMPENSATE)
    assert (missing.status_code, missing.json()["code"]) == (404, "effect_not_found")
    for persona in (auditor, agent):
        assert persona.post("/api/v1/effects/r-1/compensate", COMPENSATE).status_code == 403
    assert not Effect.objects.filter(compensates=applied).exists()
    assert owner_value() == ("released", 43)


def test_an_effect_is_compensated_once(applied, operator):
    first = operator.post("/api/v1/effects/r-1/compensate", COMPENSATE)
    assert first.status_code == 201
    again = operator.post("/api/v1/effects/r-1/compensate", COMPENSATE)
    assert (again.status_code, again.json()["code"]) == (409, "already_compensated")
    assert again.json()["compensated_by"] == first.json()["idempotency_key"]


def test_only_an_effect_the_owner_accepted_can_be_compensated(collectible, agent, operator):
    snapshot = reconcile(agent)
    sandbox_record_write(
        source="case-service", subject=SUBJECT, field="collections_status", value="collect"
    )
    commit(agent, snapshot, "release_collections_hold", "released", "stale-1")
    assert Effect.objects.get(idempotency_key="stale-1").status == "rejected"
    response = operator.post("/api/v1/effects/stale-1/compensate", COMPENSATE)
    assert (response.status_code, response.json()["code"]) == (409, "not_compensable")


def test_the_service_refuses_people_without_the_operator_role(applied, auditor):
    from reconcile_app.errors import Forbidden

    with pytest.raises(Forbidden):
        effect_compensate(
            idempotency_key="r-1",
            principal=auditor.principal,
            actor=auditor.user,
            **COMPENSATE,
        )
    assert not Effect.objects.filter(compensates=applied).exists()


def compensate_as(persona) -> Effect:
    return effect_compensate(
        idempotency_key="r-1", principal=persona.principal, actor=persona.user, **COMPENSATE
    ).effect


def test_a_compensation_committed_after_the_check_refuses_the_later_one(
    applied, operator, monkeypatch
):
    """The later request passed the early check, then another operator's compensation
    reached the owner before it read: it must not undo the effect a second time."""
    reads = compensation.snapshot_issue
    first: list[Effect] = []

    def another_operator_first(**kwargs: Any) -> Any:
        monkeypatch.setattr(compensation, "snapshot_issue", reads)
        first.append(compensate_as(operator))
        return reads(**kwargs)

    monkeypatch.setattr(compensation, "snapshot_issue", another_operator_first)
    with pytest.raises(Conflict) as refused:
        compensate_as(operator)
    assert refused.value.code == "already_compensated"
    assert Effect.objects.filter(compensates=applied).get() == first[0]
    # The owner applied the undo once; the refused one left no effect, event or audit row.
    assert owner_value() == ("manual_review", 44)
    assert SandboxEffect.objects.filter(idempotency_key__startswith="compensate-").count() == 1
    assert EffectEvent.objects.filter(effect=applied, kind="compensated").count() == 1
    assert AuditEvent.objects.filter(action="effect.compensate").count() == 2


@pytest.mark.django_db(transaction=True)
def test_two_operators_compensating_at_once_record_one_compensation(applied, operator, monkeypatch):
    """Both read the owner before either records: their transactions race on the original."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has one writer at a time: the two transactions cannot overlap")
    reads = compensation.snapshot_issue
    both_read = threading.Barrier(2, timeout=10)

    def read_then_wait(**kwargs: Any) -> Any:
        snapshot = reads(**kwargs)
        both_read.wait()
        return snapshot

    monkeypatch.setattr(compensation, "snapshot_issue", read_then_wait)
    outcomes: list[Effect | Exception] = []

    def compensate() -> None:
        try:
            outcomes.append(compensate_as(operator))
        except Exception as exc:
            outcomes.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=compensate) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)

    effects = [outcome for outcome in outcomes if isinstance(outcome, Effect)]
    refusals = [outcome for outcome in outcomes if isinstance(outcome, Conflict)]
    assert len(effects) == 1, outcomes
    assert [refusal.code for refusal in refusals] == ["already_compensated"], outcomes
    assert list(Effect.objects.filter(compensates=applied)) == effects
    assert owner_value() == ("manual_review", 44)
    assert AuditEvent.objects.filter(action="effect.compensate").count() == 2
