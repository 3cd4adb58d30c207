"""Values pages suggest, walked from their indexes rather than read row by row: the memory
classes the quarantine page lists (declared, written, cited in a claim even by a class nobody
declared, or quarantined by name) and the audit page's actors, actions and object kinds."""

from __future__ import annotations

from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from reconcile_app.models import AuditEvent, MemoryClass
from reconcile_app.reconciliation.types import Claim
from reconcile_app.selectors.audit import audit_suggestions
from reconcile_app.selectors.memory_class_names import memory_class_names
from reconcile_app.services.audit import audit_record
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


def test_the_audit_page_suggests_every_actor_action_and_kind_from_their_indexes(operator):
    for actor, action, kind in [
        (operator.user, "quarantine.create", "quarantine"),
        (operator.user, "quarantine.lift", "quarantine"),
        (None, "contract.activate", "contract"),
    ]:
        audit_record(actor=actor, action=action, object_kind=kind, object_ref="x", reason="r")
    seen = AuditEvent.objects.values_list("actor_name", "action", "object_kind")

    with CaptureQueriesContext(connection) as queries:
        suggestions = audit_suggestions()

    assert suggestions == {
        "actors": sorted({actor for actor, _, _ in seen}),
        "actions": sorted({action for _, action, _ in seen}),
        "kinds": sorted({kind for _, _, kind in seen}),
    }
    assert "olivia-operator" in suggestions["actors"] and "contract" in suggestions["kinds"]
    assert len(queries) == 1
    plan = _plan(queries[0]["sql"])
    # About 200 ms at 300k rows on every load of the audit page, read row by row.
    assert "audit_actor_name" in plan and "audit_kind_at" in plan


def _plan(sql: str) -> str:
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # A test's tables are tiny, where a scan is cheapest: ask which index could serve.
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute(f"EXPLAIN {sql}")
        else:
            cursor.execute(f"EXPLAIN QUERY PLAN {sql}")
        return "\n".join(str(row) for row in cursor.fetchall())
