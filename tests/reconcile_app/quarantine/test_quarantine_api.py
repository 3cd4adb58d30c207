"""Quarantine a source or a memory class without switching the estate off."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from reconcile_app.models import AuditEvent, Effect, Quarantine
from reconcile_app.services.evidence import evidence_append
from reconcile_app.services.quarantine import quarantines_expire
from sandbox_app.services import sandbox_record_write
from tests.conftest import ago
from tests.reconcile_app.effects.conftest import SUBJECT, collectible, commit, reconcile  # noqa: F401


def quarantine(operator, scope: str, target: str, **extra):
    with_reason = {"scope": scope, "target": target, "reason": "suspected bad replica", **extra}
    response = operator.post("/api/v1/quarantines", with_reason)
    assert response.status_code == 202, response.content
    return response.json()


@pytest.fixture
def warehouse(estate):
    sandbox_record_write(
        source="warehouse-service",
        subject="P17",
        field="pallet_bay",
        value="bay 9",
        version=318,
        valid_from=ago(hours=2),
    )
    evidence_append(
        kind="observation",
        subject="P17",
        field="pallet_bay",
        value="bay 9",
        source="warehouse-event-ledger",
        observed_at=ago(hours=2),
    )


def pick(agent):
    return agent.post(
        "/api/v1/reconcile",
        {
            "subject": "P17",
            "purpose": "fulfilment",
            "decision_class": "warehouse-pick",
            "proposed_action": "pick_pallet",
        },
    ).json()


def test_quarantined_source_fails_closed_and_other_sources_keep_working(
    collectible, warehouse, agent, operator, eager_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        created = quarantine(operator, "source", "case-service")
    assert created["status"] == "applying"
    applied = operator.client.get(f"/api/v1/quarantines/{created['id']}").json()
    assert applied["status"] == "applied"
    assert "snapshots" in applied["affected"]

    refused = reconcile(agent)
    assert refused["decision"]["result"] == "refuse"
    assert refused["fields"]["collections_status"]["status"] == "quarantined"
    assert refused["fields"]["collections_status"]["value"] is None
    assert refused["decision"]["reasons"][0]["code"] == "source_quarantined"
    # The warehouse contract reads another source: untouched.
    assert pick(agent)["decision"]["result"] == "allow"


def test_commit_against_a_quarantined_source_is_423(collectible, agent, operator):
    snapshot = reconcile(agent)
    quarantine(operator, "source", "case-service")
    response = commit(agent, snapshot, "release_collections_hold", "released", "q-1")
    assert (response.status_code, response.json()["code"]) == (423, "source_quarantined")
    assert not Effect.objects.exists()


def test_readbacks_wait_while_the_source_is_quarantined(collectible, agent, operator):
    from reconcile_app.services.effects import OwnerUnavailable, effect_readback

    snapshot = reconcile(agent)
    assert commit(agent, snapshot, "release_collections_hold", "released", "q-2").status_code == 201
    quarantine(operator, "source", "case-service")
    effect = Effect.objects.get(idempotency_key="q-2")
    with pytest.raises(OwnerUnavailable):
        effect_readback(effect_id=effect.pk)
    effect.refresh_from_db()
    assert effect.status == "accepted"  # held, not failed


def test_quarantined_memory_class_claims_and_writes(collectible, agent, operator):
    quarantine(operator, "memory_class", "episodic")
    body = agent.post(
        "/api/v1/reconcile",
        {
            "subject": SUBJECT,
            "purpose": "collections",
            "decision_class": "collections-contact-release",
            "proposed_action": "release_collections_hold",
            "claims": [
                {
                    "subject": SUBJECT,
                    "field": "collections_status",
                    "value": "collect",
                    "written_at": ago(minutes=5).isoformat(),
                    "memory_class": "episodic",
                },
                {
                    "subject": SUBJECT,
                    "field": "collections_status",
                    "value": "collect",
                    "written_at": ago(minutes=5).isoformat(),
                    "memory_class": "case-notes",
                },
            ],
        },
    ).json()
    assert [claim["verdict"] for claim in body["claims"]] == ["quarantined", "confirmed"]
    refused = agent.post(
        "/api/v1/memories",
        {
            "memory_class": "episodic",
            "subject": SUBJECT,
            "purpose": "collections",
            "field": "collections_status",
            "value": "collect",
            "derived_from": ["ev-collect"],
        },
    )
    assert (refused.status_code, refused.json()["code"]) == (423, "memory_class_quarantined")
    replay = agent.post(f"/api/v1/snapshots/{body['snapshot_id']}/replay", {}).json()
    assert replay["exact"] is True


def test_lift_needs_a_reason_and_restores_reads(collectible, agent, operator):
    created = quarantine(operator, "source", "case-service")
    missing = operator.post(f"/api/v1/quarantines/{created['id']}/lift", {"reason": ""})
    assert missing.status_code == 400
    lifted = operator.post(
        f"/api/v1/quarantines/{created['id']}/lift", {"reason": "replica resynchronised"}
    )
    assert lifted.status_code == 200
    assert lifted.json()["status"] == "lifted"
    assert reconcile(agent)["decision"]["result"] == "allow"
    again = operator.post(f"/api/v1/quarantines/{created['id']}/lift", {"reason": "twice"})
    assert (again.status_code, again.json()["code"]) == (409, "not_active")
    assert list(
        AuditEvent.objects.filter(object_ref=created["id"])
        .values_list("action", flat=True)
        .order_by("at")
    ) == ["quarantine.create", "quarantine.lift"]


def test_apply_twice_changes_nothing_twice(collectible, operator):
    from reconcile_app.services.quarantine import quarantine_apply

    created = quarantine(operator, "source", "case-service")
    first = quarantine_apply(quarantine_id=created["id"])
    second = quarantine_apply(quarantine_id=created["id"])
    assert first.applied_at == second.applied_at
    assert first.status == second.status == "applied"


def test_quarantine_with_an_end_time_lifts_itself(collectible, operator):
    created = quarantine(
        operator,
        "source",
        "case-service",
        ends_at=(timezone.now() + timedelta(minutes=5)).isoformat(),
    )
    assert quarantines_expire(now=timezone.now() + timedelta(minutes=6)) == 1
    assert Quarantine.objects.get(quarantine_id=created["id"]).status == "lifted"


def test_the_creation_audit_row_says_when_it_ends_and_how_far_back_it_looks(collectible, operator):
    """An end chosen by a person is theirs: the system's lift at that time is traced to it."""
    ends_at = timezone.now() + timedelta(minutes=5)
    since = ago(hours=2)
    created = quarantine(
        operator,
        "source",
        "case-service",
        ends_at=ends_at.isoformat(),
        since=since.isoformat(),
    )
    quarantines_expire(now=ends_at + timedelta(minutes=1))
    create, lift = AuditEvent.objects.filter(object_ref=created["id"]).order_by("at", "pk")
    assert create.after["ends_at"] == created["ends_at"]
    assert create.after["since"] == created["since"]
    assert (lift.actor_name, lift.reason) == ("system", "ended at its scheduled end time")


def test_a_lookback_dated_ahead_is_refused_and_nothing_is_quarantined(collectible, operator):
    ahead = operator.post(
        "/api/v1/quarantines",
        {
            "scope": "source",
            "target": "case-service",
            "reason": "mistyped year",
            "since": (timezone.now() + timedelta(days=365)).isoformat(),
        },
    )
    assert (ahead.status_code, ahead.json()["code"]) == (400, "invalid_since")
    assert not Quarantine.objects.exists()
    created = quarantine(operator, "source", "case-service", since=ago(hours=2).isoformat())
    assert created["status"] == "applying"


def test_only_operators_quarantine(collectible, reviewer, auditor, agent):
    for persona in (reviewer, auditor, agent):
        response = persona.post(
            "/api/v1/quarantines", {"scope": "source", "target": "case-service", "reason": "x"}
        )
        assert response.status_code == 403
    assert not Quarantine.objects.exists()


def test_unknown_source_and_double_quarantine_are_refused(collectible, operator):
    unknown = operator.post(
        "/api/v1/quarantines", {"scope": "source", "target": "nope", "reason": "x"}
    )
    assert (unknown.status_code, unknown.json()["code"]) == (400, "unknown_source")
    quarantine(operator, "source", "case-service")
    twice = operator.post(
        "/api/v1/quarantines", {"scope": "source", "target": "case-service", "reason": "x"}
    )
    assert (twice.status_code, twice.json()["code"]) == (409, "already_quarantined")


def test_reconcile_racing_a_quarantine_reruns_with_it(collectible, agent, operator, monkeypatch):
    """A quarantine created after the reads but before the insert is not half-seen."""
    from reconcile_app.services import reconcile as protocol

    original = protocol.read_fields
    fired = []

    def reads_then_quarantine(**kwargs):
        result = original(**kwargs)
        if not fired:
            fired.append(True)
            quarantine(operator, "source", "case-service")
        return result

    monkeypatch.setattr(protocol, "read_fields", reads_then_quarantine)
    body = reconcile(agent)
    assert body["fields"]["collections_status"]["status"] == "quarantined"
    assert body["decision"]["result"] == "refuse"


def test_quarantines_changing_under_every_attempt_is_a_clean_409(collectible, agent, monkeypatch):
    import dataclasses

    from reconcile_app.services import reconcile

    original = reconcile.quarantines_active

    def always_behind():
        # The view is read at an epoch the database has already left, on every attempt: the
        # snapshot's write (the ORM transaction's epoch_check, or PostgreSQL's one
        # statement) must refuse each time.
        return dataclasses.replace(original(), epoch=-1)

    monkeypatch.setattr(reconcile, "quarantines_active", always_behind)
    response = agent.post(
        "/api/v1/reconcile",
        {
            "subject": SUBJECT,
            "purpose": "collections",
            "decision_class": "collections-contact-release",
            "proposed_action": "release_collections_hold",
        },
    )
    assert (response.status_code, response.json()["code"]) == (409, "quarantine_changed")
    from reconcile_app.models import DecisionSnapshot

    assert not DecisionSnapshot.objects.exists()


def test_lifting_a_source_quarantine_resumes_the_checks_it_held(
    collectible, agent, operator, django_capture_on_commit_callbacks
):
    """Held readbacks and resolutions back off like failed ones (up to an hour apart): the
    lift makes them due, so the next sweep asks the owner again."""
    from reconcile_app.services.effects import effects_sweep
    from sandbox_app.services import sandbox_fault_add

    sandbox_fault_add(source="case-service", kind="timeout_after_commit", count=1)
    with django_capture_on_commit_callbacks(execute=False):
        snapshot = reconcile(agent)
        answered = commit(agent, snapshot, "release_collections_hold", "released", "held-1")
    assert answered.json()["status"] == "unknown"
    created = quarantine(operator, "source", "case-service")
    later = timezone.now() + timedelta(hours=1)
    Effect.objects.filter(idempotency_key="held-1").update(next_check_at=later)
    assert effects_sweep()["resolutions"] == 0  # held, backed off
    operator.post(f"/api/v1/quarantines/{created['id']}/lift", {"reason": "owner fixed"})
    assert Effect.objects.get(idempotency_key="held-1").next_check_at <= timezone.now()
    assert effects_sweep()["resolutions"] == 1
    lift = AuditEvent.objects.get(object_ref=created["id"], action="quarantine.lift")
    assert lift.after["effects_resumed"] == 1


@pytest.mark.parametrize("scope", ["galaxy", "", 7, ["source"], None])
def test_an_unknown_scope_is_the_declared_invalid_scope(collectible, operator, scope):
    """The schema names `invalid_scope` for a scope that is none of the three."""
    response = operator.post(
        "/api/v1/quarantines", {"scope": scope, "target": "case-service", "reason": "why"}
    )
    assert (response.status_code, response.json()["code"]) == (400, "invalid_scope")
    assert not Quarantine.objects.exists()
