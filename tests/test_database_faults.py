"""The database going away mid-request: a clean 503, and nothing half-written."""

from __future__ import annotations

import time

import pytest
from django.db import DEFAULT_DB_ALIAS, OperationalError, connection, connections

from config.insert_batch import InsertBatch
from reconcile_app.models import ClaimVerdict, DecisionReceipt, DecisionSnapshot, StateRead
from reconcile_app.services import snapshots
from tests.reconcile_app.effects.conftest import SUBJECT, collectible  # noqa: F401


def admin_session():
    """A session of its own on the test database, as an administrator's would be."""
    import psycopg

    settings_dict = connection.settings_dict
    return psycopg.connect(
        host=settings_dict["HOST"] or "127.0.0.1",
        port=settings_dict["PORT"] or 5432,
        user=settings_dict["USER"],
        dbname=settings_dict["NAME"],
        autocommit=True,
    )


def test_database_lost_mid_snapshot_is_503_and_writes_nothing(collectible, agent, monkeypatch):
    if connection.vendor == "postgresql":
        # One statement writes the snapshot's rows (services/snapshot_statement.py): the
        # connection is lost as it goes out.
        def lost(*args, **kwargs):
            raise OperationalError("server closed the connection unexpectedly")

        monkeypatch.setattr(snapshots, "snapshot_statement_send", lost)
    else:
        original = InsertBatch.send

        def drop_connection(batch):
            original(batch)  # the snapshot row, its reads, verdicts and receipt are written...
            raise OperationalError("server closed the connection unexpectedly")  # ...then dies

        monkeypatch.setattr(InsertBatch, "send", drop_connection)
    response = agent.post(
        "/api/v1/reconcile",
        {
            "subject": SUBJECT,
            "purpose": "collections",
            "decision_class": "collections-contact-release",
            "proposed_action": "release_collections_hold",
            "claims": [{"subject": SUBJECT, "field": "collections_status", "value": "collect"}],
        },
    )
    assert response.status_code == 503
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "database_unavailable"
    for model in (DecisionSnapshot, StateRead, ClaimVerdict, DecisionReceipt):
        assert not model.objects.exists(), model.__name__


def test_database_unreachable_is_a_clean_503_problem(agent, monkeypatch, db):
    from django.db.backends.base.base import BaseDatabaseWrapper

    def refuse(self):
        raise OperationalError("could not connect to server: Connection refused")

    monkeypatch.setattr(BaseDatabaseWrapper, "ensure_connection", refuse)
    response = agent.client.get("/api/v1/snapshots")
    monkeypatch.undo()
    assert response.status_code == 503
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "database_unavailable"
    # Nothing was written: the same request may simply be sent again, after a moment.
    assert int(response["Retry-After"]) > 0


@pytest.mark.skipif(connection.vendor != "postgresql", reason="a real server-side kill")
@pytest.mark.django_db(transaction=True)
def test_postgresql_backend_killed_mid_snapshot_is_503_and_writes_nothing(
    collectible, agent, monkeypatch
):
    """The server terminates our session as the snapshot's statement goes out."""

    original = snapshots.snapshot_statement_send

    def kill_then_insert(*args, **kwargs):
        pid = connection.connection.info.backend_pid
        with admin_session() as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", [pid])
        return original(*args, **kwargs)

    monkeypatch.setattr(snapshots, "snapshot_statement_send", kill_then_insert)
    response = agent.post(
        "/api/v1/reconcile",
        {
            "subject": SUBJECT,
            "purpose": "collections",
            "decision_class": "collections-contact-release",
            "proposed_action": "release_collections_hold",
        },
    )
    monkeypatch.undo()
    assert response.status_code == 503
    assert response.json()["code"] == "database_unavailable"
    connection.close()  # the killed session is gone; the next query opens a new one
    for model in (DecisionSnapshot, StateRead, ClaimVerdict, DecisionReceipt):
        assert not model.objects.exists(), model.__name__


@pytest.mark.skipif(connection.vendor != "postgresql", reason="a real server-side kill")
@pytest.mark.django_db(transaction=True)
def test_a_kept_connection_the_server_closed_is_replaced_before_the_next_request(
    collectible, agent
):
    """A PostgreSQL restart between two requests: the next request opens a new session
    instead of failing on the old one (config/postgresql/base.py)."""

    body = {
        "subject": SUBJECT,
        "purpose": "collections",
        "decision_class": "collections-contact-release",
    }
    assert agent.post("/api/v1/reconcile", body).status_code == 201
    killed = connection.connection.info.backend_pid
    with admin_session() as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [killed])
        deadline = time.monotonic() + 5
        while (
            admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [killed]).fetchone()
            and time.monotonic() < deadline
        ):
            time.sleep(0.02)
    # What Django runs as each request ends (the test client leaves it out).
    connection.close_if_unusable_or_obsolete()

    response = agent.post("/api/v1/reconcile", body)

    assert response.status_code == 201, response.content
    assert connection.connection.info.backend_pid != killed


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's backend")
@pytest.mark.django_db(transaction=True)
def test_a_healthy_kept_connection_is_checked_without_a_round_trip(collectible, agent, monkeypatch):
    """While the server has said nothing, the check is a poll of the socket: Django's own
    `SELECT 1` (`is_usable`) is not sent on every request."""
    body = {
        "subject": SUBJECT,
        "purpose": "collections",
        "decision_class": "collections-contact-release",
    }
    assert agent.post("/api/v1/reconcile", body).status_code == 201
    database = connections[DEFAULT_DB_ALIAS]
    asked: list[int] = []
    monkeypatch.setattr(type(database), "is_usable", lambda self: asked.append(1) or True)
    database.close_if_unusable_or_obsolete()  # as each request ends

    assert agent.post("/api/v1/reconcile", body).status_code == 201

    assert database.health_check_enabled and database.health_check_done
    assert asked == []


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's read-only mode")
@pytest.mark.django_db(transaction=True)
def test_a_database_taking_no_writes_is_a_clean_503_not_a_500(collectible, agent):
    """A standby, or the old primary after a failover: reads answer, every write is refused
    (SQLSTATE 25006). Until the connections move to the new primary, a retry is the answer."""
    with connection.cursor() as cursor:
        cursor.execute("SET default_transaction_read_only = on")
    try:
        response = agent.post(
            "/api/v1/reconcile",
            {
                "subject": SUBJECT,
                "purpose": "collections",
                "decision_class": "collections-contact-release",
                "proposed_action": "release_collections_hold",
            },
        )
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET default_transaction_read_only = off")
    assert response.status_code == 503, response.content
    assert response.json()["code"] == "database_unavailable"
    assert int(response["Retry-After"]) > 0
    assert not DecisionSnapshot.objects.exists()
