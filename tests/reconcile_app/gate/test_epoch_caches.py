"""The gate's in-process copies (reconcile_app/epochs.py) never outlive a change: every
change to what they copy moves an epoch in the writer's transaction, and the next request
pinned to the new epoch reads afresh."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, User
from django.utils import timezone

from reconcile_app.epochs import epochs_read
from reconcile_app.models import ApiKey, Capability, Principal, Source
from reconcile_app.services.evidence import evidence_append
from reconcile_app.services.quarantine import quarantine_create
from sandbox_app.services import sandbox_record_write
from tests.conftest import COLLECTIONS, make_person

SUBJECT = "account-17"


def _reconcile(persona, subject: str = SUBJECT):
    return persona.post(
        "/api/v1/reconcile",
        {
            "subject": subject,
            "purpose": "collections",
            "decision_class": COLLECTIONS,
            "proposed_action": "release_collections_hold",
            "claims": [
                {
                    "subject": subject,
                    "field": "collections_status",
                    "value": "hold",
                    "written_at": (timezone.now() - timedelta(hours=1)).isoformat(),
                }
            ],
        },
    )


def account(subject: str, history: int = 1) -> None:
    now = timezone.now()
    for source, field, value in (
        ("case-service", "collections_status", "hold"),
        ("complaints-service", "complaint_status", "none"),
    ):
        sandbox_record_write(
            source=source,
            subject=subject,
            field=field,
            value=value,
            version=42,
            valid_from=now - timedelta(minutes=20),
        )
    for index in range(history):
        evidence_append(
            kind="observation",
            subject=subject,
            field="collections_status",
            value=("collect", "hold")[index % 2 if index < history - 1 else 1],
            source="case-ledger",
            observed_at=now - timedelta(hours=3, seconds=history - index),
        )


@pytest.fixture
def warm(estate, agent):
    """An account, and one reconcile that filled the caches."""
    account(SUBJECT)
    assert _reconcile(agent).status_code == 201
    return agent


def test_a_removed_capability_refuses_the_next_reconcile(warm):
    Capability.objects.filter(principal=warm.principal, action="release_collections_hold").delete()
    response = _reconcile(warm)
    assert response.status_code == 403
    assert response.json()["code"] == "capability_missing"


def test_a_revoked_key_is_refused_on_the_next_request(warm):
    ApiKey.objects.filter(principal=warm.principal).update(revoked_at=timezone.now())
    assert _reconcile(warm).status_code == 401


def test_a_disabled_user_is_refused_on_the_next_request(warm):
    warm.user.is_active = False
    warm.user.save(update_fields=["is_active"])
    assert _reconcile(warm).status_code == 401


def test_a_quarantine_is_seen_by_the_next_reconcile(warm, operator):
    quarantine_create(scope="source", target="case-service", reason="drill", actor=operator.user)
    body = _reconcile(warm).json()
    assert body["fields"]["collections_status"]["status"] == "quarantined"
    assert body["decision"]["result"] != "allow"


def test_a_source_change_moves_only_the_configuration_epoch(db, estate):
    before = epochs_read()
    Source.objects.filter(name="case-service").update(owner="someone else")
    after = epochs_read()
    assert after.configuration != before.configuration
    assert after.quarantine == before.quarantine


def test_a_change_of_a_persons_roles_moves_the_configuration_epoch(db, operator, reviewer):
    """Roles are groups: the user behind a cached key kept roles taken away from it until
    some other configuration changed."""
    before = epochs_read()
    operator.user.groups.clear()
    removed = epochs_read()
    assert removed.configuration != before.configuration
    reviewer.user.groups.add(*Group.objects.filter(name="operator"))
    assert epochs_read().configuration != removed.configuration


def test_a_superuser_demoted_is_refused_what_only_the_flag_allowed(estate):
    """A superuser holds every people's role (roles.py) without a group: the cached copy of
    its token's user kept the flag, and so attested as an operator, after it was taken."""
    boss = make_person("boss", [])
    User.objects.filter(pk=boss.user.pk).update(is_superuser=True)
    body = {
        "kind": "observation",
        "subject": SUBJECT,
        "field": "collections_status",
        "value": "hold",
        "source": "case-service",
        "observed_at": timezone.now().isoformat(),
    }
    assert boss.post("/api/v1/evidence", body).status_code == 201  # the copy is taken
    User.objects.filter(pk=boss.user.pk).update(is_superuser=False)
    assert boss.post("/api/v1/evidence", body).status_code == 403


def test_a_superuser_demoted_while_a_write_ran_is_asked_again_as_what_it_is_now(estate):
    """A write finding access changed since its request pinned the epochs reads the roles
    again (access_changed_since): on the user as it is now, not the flag it was loaded with."""
    from django.db import transaction

    from reconcile_app.roles import has_role
    from reconcile_app.services.key_use import key_in_use
    from reconcile_app.services.principals import access_changed_since

    key_in_use.set(None)  # no request's key: an earlier test's would be checked again here
    boss = make_person("boss", [])
    User.objects.filter(pk=boss.user.pk).update(is_superuser=True)
    principal = Principal.objects.select_related("user").get(pk=boss.principal.pk)
    assert has_role(principal.user, "operator")  # as the request's copy saw it
    seen = epochs_read()
    User.objects.filter(pk=boss.user.pk).update(is_superuser=False)

    with transaction.atomic():
        assert access_changed_since(principal, seen)
        assert not has_role(principal.user, "operator")


def test_using_a_key_does_not_move_the_epoch(agent):
    before = epochs_read()
    ApiKey.objects.filter(principal=agent.principal).update(last_used_at=timezone.now())
    assert epochs_read() == before


SAVEPOINT_STATEMENTS = 2


@pytest.mark.parametrize("history", [1, 60])
def test_a_warm_reconcile_runs_a_fixed_number_of_queries(
    estate, agent, history, django_assert_num_queries
):
    """The epochs, the sandbox owner's records, the evidence index, then the snapshot's
    rows. On PostgreSQL those are one statement (services/snapshot_statement.py, inside a
    savepoint here, the test's own transaction being open): 4 statements. Elsewhere, in a
    transaction: the quarantine epoch, the snapshot, lineage nodes (insert, then read their
    ids), then one insert per table of the rows nothing reads back by id: reads, verdict,
    lineage edges, receipt and the request's timing — 12 statements. Either whatever the
    length of the subject's history."""
    from django.db import connection

    subject = f"account-h{history}"
    account(subject, history=history)
    assert _reconcile(agent, subject).status_code == 201
    statements = 4 if connection.vendor == "postgresql" else 12
    with django_assert_num_queries(statements + SAVEPOINT_STATEMENTS):
        response = _reconcile(agent, subject)
    assert response.status_code == 201
    # The field's support is the latest entry stating its value, not every one.
    assert len(response.json()["fields"]["collections_status"]["evidence"]) == 1


def test_the_triggers_come_back_after_a_migration_dropped_them(db, estate):
    """SQLite drops a table's triggers when a migration rebuilds it: every migrate (and
    test flush) installs what is missing again."""
    from django.db import connection

    from reconcile_app.epoch_triggers import epoch_triggers_ensure, statements

    _, drops = statements(connection.vendor)
    with connection.cursor() as cursor:
        for sql in drops:
            if "reconcile_app_source" in sql:
                cursor.execute(sql)
    before = epochs_read()
    Source.objects.filter(name="case-service").update(owner="unnoticed")
    assert epochs_read() == before  # the trigger is gone: this is what the ensure repairs
    epoch_triggers_ensure(connection)
    epoch_triggers_ensure(connection)  # idempotent
    Source.objects.filter(name="case-service").update(owner="noticed")
    assert epochs_read().configuration != before.configuration
