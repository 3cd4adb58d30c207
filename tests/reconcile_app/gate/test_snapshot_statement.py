"""The snapshot's one-statement write on PostgreSQL (services/snapshot_statement.py): all of
it or none of it, and a lineage node another transaction commits meanwhile still gets its
edge."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections, transaction
from django.utils import timezone

from lineage_app.models import Edge, Node
from reconcile_app.models import DecisionSnapshot, QuarantineEpoch, StateRead
from reconcile_app.services import snapshot_statement
from tests.reconcile_app.gate.test_epoch_caches import SUBJECT, _reconcile, account

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the one-statement write is PostgreSQL's"
)


@pytest.mark.django_db(transaction=True)
def test_a_lineage_node_committed_meanwhile_still_gets_its_edge(estate, agent):
    """The statement waits on the other transaction's uncommitted node; when that commits,
    the node is neither inserted by the statement nor in its snapshot: the statement undoes
    itself (reconcile_abort) and is sent again, which sees the node."""
    account(SUBJECT)
    holding = threading.Event()
    release = threading.Event()

    def other_writer() -> None:
        try:
            with transaction.atomic():
                Node.objects.create(
                    kind="source", ref="case-service@42", label="other", recorded_at=timezone.now()
                )
                holding.set()
                release.wait(10)
        finally:
            connections.close_all()

    thread = threading.Thread(target=other_writer)
    thread.start()
    assert holding.wait(10)
    threading.Timer(0.5, release.set).start()
    response = _reconcile(agent)
    thread.join(10)

    assert response.status_code == 201, response.content
    snapshot_id = response.json()["snapshot_id"]
    assert Edge.objects.filter(
        src__kind="source",
        src__ref="case-service@42",
        dst__kind="read",
        dst__ref=f"{snapshot_id}/collections_status",
    ).exists()
    assert Node.objects.get(kind="source", ref="case-service@42").label == "other"
    assert DecisionSnapshot.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_quarantine_epoch_that_moved_writes_nothing(estate, agent, monkeypatch):
    """The epoch the decision's quarantine view was read under is checked by the statement
    itself: a moved epoch inserts no row of any table, and the protocol runs again."""
    account(SUBJECT)
    original = snapshot_statement.snapshot_statement_send
    outcomes: list[object] = []

    def epoch_moves_first(*args, **kwargs):
        if not outcomes:
            QuarantineEpoch.objects.filter(pk=1).update(epoch=123456789)
        outcome = original(*args, **kwargs)
        outcomes.append(outcome)
        if outcome is None:  # nothing of the refused attempt may be stored
            assert not DecisionSnapshot.objects.exists()
            assert not StateRead.objects.exists()
            assert not Node.objects.filter(kind="snapshot").exists()
        return outcome

    from reconcile_app.services import snapshots

    monkeypatch.setattr(snapshots, "snapshot_statement_send", epoch_moves_first)
    response = _reconcile(agent)

    assert response.status_code == 201, response.content
    assert outcomes[0] is None and outcomes[-1] is not None
    assert DecisionSnapshot.objects.count() == 1


@pytest.mark.django_db
def test_lineage_changing_under_every_attempt_is_a_409_and_writes_nothing(
    estate, agent, monkeypatch
):
    account(SUBJECT)
    always_raced = "SELECT reconcile_abort('lineage node raced')"
    monkeypatch.setattr(
        snapshot_statement, "_STATEMENTS", {True: always_raced, False: always_raced}
    )
    response = _reconcile(agent)

    assert response.status_code == 409
    assert response.json()["code"] == "lineage_changed"
    assert not DecisionSnapshot.objects.exists()
