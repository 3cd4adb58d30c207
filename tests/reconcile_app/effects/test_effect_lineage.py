"""What an effect's receipt, readback and unknown outcome bring to the lineage graph, and what
a commit costs in statements."""

from __future__ import annotations

from django.db import connection

from lineage_app.choices import Relation
from lineage_app.models import Node
from reconcile_app.models import EvidenceEntry
from reconcile_app.services.effects import effect_readback
from sandbox_app.services import sandbox_fault_add
from tests.lineage_app.recorded_edges import edges
from tests.reconcile_app.effects.conftest import SUBJECT, commit, reconcile, released

# Statements one first POST /effects runs: the snapshot, the key, the evidence and taint
# checks; recorded (the epochs held, insert, event, lineage, then the ledger's head held and
# the evidence and taint checks again); sent (update and event); the owner's sandbox (its
# fault list and write); accepted (lock, update, the ledger entry with its head,
# support and lineage, the event, the reload); the representation's compensation. Inside
# the test's transaction each atomic block adds its savepoint and release. On PostgreSQL a
# write of the graph is one statement (three on SQLite: the nodes, their ids, the edges) and
# the move to sent one statement with its event, outside any transaction; the ledger entry
# and the move of its head one statement (a fresh id is not looked up first); the support
# row is one upsert, and the receipt's snapshot, read with the effect, is not looked
# up again. Before those, a commit ran 40 statements on PostgreSQL and 42 on SQLite.
COMMIT_STATEMENTS = {"postgresql": 35, "sqlite": 43}


def _edges_into(evidence_id: str) -> set[tuple[str, str]]:
    return {(src, relation) for src, dst, relation in edges() if dst == f"evidence:{evidence_id}"}


def test_receipt_and_readback_are_generated_by_the_effect_and_derived_from_the_snapshot(
    collectible, agent, eager_tasks, django_capture_on_commit_callbacks
):
    snapshot = reconcile(agent)
    with django_capture_on_commit_callbacks(execute=True):
        response = commit(agent, snapshot, "release_collections_hold", "released", "lin-1")
    assert response.status_code == 201, response.content
    expected = {
        ("effect:lin-1", Relation.WAS_GENERATED_BY),
        (f"snapshot:{snapshot['snapshot_id']}", Relation.WAS_DERIVED_FROM),
    }
    for kind in ("effect_receipt", "readback"):
        entry = EvidenceEntry.objects.get(kind=kind, subject=SUBJECT)
        assert _edges_into(entry.evidence_id) == expected, kind
        node = Node.objects.get(kind="evidence", ref=entry.evidence_id)
        assert node.label == f"{kind} {SUBJECT}.collections_status"


def test_an_unknown_outcome_is_generated_by_the_effect(
    collectible, agent, django_capture_on_commit_callbacks
):
    snapshot = reconcile(agent)
    sandbox_fault_add(source="case-service", kind="timeout_after_commit", count=1)
    with django_capture_on_commit_callbacks(execute=False):
        response = commit(agent, snapshot, "release_collections_hold", "released", "lin-2")
    assert response.status_code == 202, response.content
    entry = EvidenceEntry.objects.get(kind="tool_request", subject=SUBJECT)
    assert _edges_into(entry.evidence_id) == {
        ("effect:lin-2", Relation.WAS_GENERATED_BY),
        (f"snapshot:{snapshot['snapshot_id']}", Relation.WAS_DERIVED_FROM),
    }


def test_a_commit_runs_a_fixed_number_of_statements(
    collectible, agent, django_assert_num_queries, django_capture_on_commit_callbacks
):
    snapshot = reconcile(agent)
    with (
        django_capture_on_commit_callbacks(execute=False),
        django_assert_num_queries(COMMIT_STATEMENTS[connection.vendor]),
    ):
        response = commit(agent, snapshot, "release_collections_hold", "released", "lin-3")
    assert response.status_code == 201, response.content


# Statements one readback runs: the effect with its source and snapshot, the attempt's count,
# the owner's sandbox read, whether the owner took another command on the target since (once
# the read would verify); then the lock (without joining again what the first read holds),
# the ledger entry with its head, support and lineage, the move, the event, the reload. The
# same savings as a commit's took it from 23 on PostgreSQL and 24 on SQLite.
READBACK_STATEMENTS = {"postgresql": 19, "sqlite": 23}


def test_a_readback_runs_a_fixed_number_of_statements(
    collectible, agent, django_assert_num_queries, django_capture_on_commit_callbacks
):
    effect = released(agent, django_capture_on_commit_callbacks, "lin-4")

    with django_assert_num_queries(READBACK_STATEMENTS[connection.vendor]):
        assert effect_readback(effect_id=effect.pk).status == "verified"
