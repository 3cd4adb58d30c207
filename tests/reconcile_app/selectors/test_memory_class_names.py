"""The memory classes the quarantine page lists: declared, written, cited in a claim (even a
class nobody declared), or quarantined by name; walked from indexes, not read row by row."""

from __future__ import annotations

from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from reconcile_app.models import MemoryClass
from reconcile_app.reconciliation.types import Claim
from reconcile_app.selectors.memory_class_names import memory_class_names
from reconcile_app.services.quarantine import quarantine_create
from reconcile_app.services.reconcile import ReconcileRequest, snapshot_issue
from tests.conftest import COLLECTIONS
from tests.reconcile_app.console.conftest import issue_snapshot
from tests.reconcile_app.facts.conftest import registry, remember  # noqa: F401 (a fixture)


def _reconcile_citing(agent, *classes: str) -> None:
    snapshot_issue(
        principal=agent.principal,
        request=ReconcileRequest(
            subject="account-17",
            purpose="collections",
            decision_class=COLLECTIONS,
            proposed_action="release_collections_hold",
            claims=[
                Claim(
                    subject="account-17",
                    field="collections_status",
                    value="collect",
                    written_at=None,
                    memory_class=memory_class,
                )
                for memory_class in classes
            ],
        ),
    )


def test_every_known_class_once_in_order(estate, registry, agent, operator):
    issue_snapshot(agent, subject="account-17")
    _reconcile_citing(agent, "hearsay", "", "hearsay", "a-first")
    _reconcile_citing(agent, "zz-last")
    remember(agent, "baseline.math-eval", "m-1", "ckpt-0519", "registry@r18")
    quarantine_create(
        scope="memory_class", target="never-written", reason="pre-emptive", actor=operator.user
    )
    declared = set(MemoryClass.objects.values_list("name", flat=True))

    names = memory_class_names()

    assert names == sorted(declared | {"hearsay", "a-first", "zz-last", "never-written"})
    assert "" not in names and "operational" in names  # written (and declared)


def test_no_class_anywhere_is_an_empty_list(db):
    MemoryClass.objects.all().delete()
    assert memory_class_names() == []


def test_written_and_cited_names_are_walked_from_their_indexes(estate, agent):
    """On a year's estate a DISTINCT over every memory and every claim verdict read all of
    them on each load of the quarantine page (190 to 765 ms, growing with every reconcile)."""
    _reconcile_citing(agent, "hearsay")
    with CaptureQueriesContext(connection) as queries:
        memory_class_names()
    assert len(queries) == 1
    plan = _plan(queries[0]["sql"])
    assert "claimverdict_memory_class" in plan
    assert "memory_class" in plan.replace("claimverdict_memory_class", "")


def _plan(sql: str) -> str:
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # A test's tables are tiny, where a scan is cheapest: ask which index could serve.
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute(f"EXPLAIN {sql}")
        else:
            cursor.execute(f"EXPLAIN QUERY PLAN {sql}")
        return "\n".join(str(row) for row in cursor.fetchall())
