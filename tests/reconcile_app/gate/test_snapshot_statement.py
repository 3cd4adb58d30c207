"""The snapshot's one-statement write on PostgreSQL (services/snapshot_statement.py): all of
it or none of it, and a lineage node another transaction commits meanwhile still gets its
edge."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection, connections, transaction
from django.utils import timezone

from lineage_app.models import Edge, Node
from reconcile_app.models import Contradiction, DecisionSnapshot, QuarantineEpoch, StateRead
from reconcile_app.selectors.contradictions import contradiction_representation
from reconcile_app.services import snapshot_statement
from sandbox_app.services import sandbox_record_write
from tests.factories import EvidenceFactory, SandboxRecordFactory, reconcile_body
from tests.lineage_app.node_race import node_committed_meanwhile
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
    with node_committed_meanwhile("source", "case-service@42"):
        response = _reconcile(agent)

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
        snapshot_statement,
        "_STATEMENTS",
        {True: (always_raced, []), False: (always_raced, [])},
    )
    response = _reconcile(agent)

    assert response.status_code == 409
    assert response.json()["code"] == "lineage_changed"
    assert not DecisionSnapshot.objects.exists()


PALLET = "pallet-P17"
PICK = reconcile_body(
    subject=PALLET, action="pick_pallet", purpose="fulfilment", decision_class="warehouse-pick"
)


def _pallet_moved(now) -> None:
    """The warehouse says bay-4, a floor scan a minute ago says bay-9: a contradiction."""
    SandboxRecordFactory(
        source="warehouse-service",
        subject=PALLET,
        field="pallet_bay",
        value="bay-4",
        version=318,
        valid_from=now - timedelta(hours=1),
    )
    EvidenceFactory(
        subject=PALLET,
        field="pallet_bay",
        value="bay-4",
        source="warehouse-ledger",
        observed_at=now - timedelta(hours=1),
    )
    EvidenceFactory(
        subject=PALLET,
        field="pallet_bay",
        value="bay-9",
        source="floor-scanner",
        observed_at=now - timedelta(minutes=1),
        evidence_id="ev-moved",
    )


@pytest.mark.django_db(transaction=True)
def test_locks_are_taken_in_the_orm_paths_order(estate, agent, now):
    """An escalating reconcile (the ORM path) inserts its lineage nodes, then touches the
    open contradiction. The statement must take them in the same order, or the two deadlock
    (PostgreSQL aborts one: a 503). Here another transaction holds a node the statement needs,
    then updates the contradiction the statement would otherwise have locked first."""
    _pallet_moved(now)
    first = agent.post("/api/v1/reconcile", PICK)
    assert first.status_code == 201, first.content
    [contradiction] = Contradiction.objects.all()
    sandbox_record_write(
        source="warehouse-service",
        subject=PALLET,
        field="pallet_bay",
        value="bay-4",
        version=319,
        valid_from=now - timedelta(minutes=30),
    )
    holding = threading.Event()
    errors: list[BaseException] = []

    def orm_writer() -> None:
        try:
            with transaction.atomic():
                Node.objects.create(
                    kind="source",
                    ref="warehouse-service@319",
                    label="other",
                    recorded_at=timezone.now(),
                )
                holding.set()
                time.sleep(0.7)  # the statement now waits on this node's key
                with connection.cursor() as cursor:
                    cursor.execute("SET LOCAL lock_timeout = '3s'")
                    cursor.execute(
                        "UPDATE reconcile_app_contradiction SET last_seen_at = now() WHERE id = %s",
                        [contradiction.pk],
                    )
        except BaseException as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=orm_writer)
    thread.start()
    assert holding.wait(10)
    response = agent.post("/api/v1/reconcile", PICK)
    thread.join(15)

    assert response.status_code == 201, response.content
    assert not errors


def _prepared_after_three_reconciles(now, agent) -> list[str]:
    """What this connection holds prepared once three reconciles have run on it."""
    _pallet_moved(now)
    for _ in range(3):
        assert agent.post("/api/v1/reconcile", PICK).status_code == 201
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


@pytest.mark.django_db
def test_the_statement_is_prepared_once_per_connection(estate, agent, now):
    prepared = _prepared_after_three_reconciles(now, agent)
    assert len([s for s in prepared if s.startswith("WITH guard AS")]) == 1


@pytest.mark.django_db
def test_the_reads_on_every_reconcile_are_prepared_too(estate, agent, now):
    # Parsing and planning a client-bound statement cost the server more than these reads.
    from reconcile_app.epochs import _EPOCHS_SQL
    from reconcile_app.selectors.ledger import _support_sql

    prepared = _prepared_after_three_reconciles(now, agent)
    assert _EPOCHS_SQL in prepared
    # psycopg sends %s as $1, $2, ... (the owner records' read goes through the same
    # `raw_select.select`; this estate's owners are not the sandbox's)
    assert any(s.startswith(_support_sql(1).split(" WHERE ")[0]) for s in prepared)


@pytest.mark.django_db
def test_the_contradictions_a_reconcile_saw_come_back_as_stored(estate, agent, now):
    """The statement's rows are read by the columns its SELECT names, not by
    `cursor.description`: what the response shows of the contradiction it opened, and of
    the one it joined the next time, is what the database holds."""
    _pallet_moved(now)
    opened = agent.post("/api/v1/reconcile", PICK)
    joined = agent.post("/api/v1/reconcile", PICK)

    assert opened.status_code == joined.status_code == 201, (opened.content, joined.content)
    [stored] = Contradiction.objects.select_related("snapshot", "resolved_by")
    assert stored.last_seen_at > stored.detected_at  # the second reconcile joined it
    [shown] = joined.json()["contradictions"]
    # (a snapshot shows the contradictions it saw under its own id)
    assert shown == contradiction_representation(stored, joined.json()["snapshot_id"])
