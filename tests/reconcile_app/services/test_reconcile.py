"""services.reconcile: what a snapshot writes, and the evidence it sees at its cut-off."""

from __future__ import annotations

from datetime import timedelta

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from reconcile_app.models import ClaimVerdict, Contradiction, DecisionReceipt, StateRead
from reconcile_app.reconciliation.types import Claim
from reconcile_app.selectors.ledger import evidence_as_of
from reconcile_app.services.evidence import evidence_append
from reconcile_app.services.reconcile import ReconcileRequest, snapshot_issue
from tests.factories import ACCOUNT, COLLECTIONS, EvidenceFactory, seed_account_17


def request(*claims: Claim) -> ReconcileRequest:
    return ReconcileRequest(
        subject=ACCOUNT,
        purpose="collections",
        decision_class=COLLECTIONS,
        proposed_action="release_collections_hold",
        claims=claims,
    )


def test_snapshot_rows_mirror_the_hashed_content(estate, agent, now):
    seed_account_17(now)
    snapshot = snapshot_issue(
        principal=agent.principal,
        request=request(
            Claim(ACCOUNT, "collections_status", "hold", now - timedelta(minutes=10)),
            Claim(
                ACCOUNT,
                "collections_status",
                "collect",
                now - timedelta(minutes=5),
                memory_class="episodic",
            ),
        ),
    )

    content = snapshot.content
    assert snapshot.result == content["decision"]["result"] == "deny"
    assert snapshot.completeness == content["completeness"] == "complete"
    assert snapshot.principal == agent.principal
    reads = {r.field: r for r in StateRead.objects.filter(snapshot=snapshot)}
    assert set(reads) == {"collections_status", "complaint_status"}
    case = reads["collections_status"]
    assert (case.source.name, case.version, case.value, case.status, case.required) == (
        "case-service",
        42,
        "hold",
        "ok",
        True,
    )
    assert case.evidence == ["ev-002"]
    verdicts = list(ClaimVerdict.objects.filter(snapshot=snapshot).order_by("index"))
    assert [v.verdict for v in verdicts] == ["confirmed", "contradicted"]
    receipt = DecisionReceipt.objects.get(snapshot=snapshot)
    assert receipt.decision_id == "dec_" + snapshot.content_hash[:32]
    assert (receipt.result, receipt.permitted_actions, receipt.proposed_action) == (
        "deny",
        [],
        "release_collections_hold",
    )
    assert receipt.reasons == content["decision"]["reasons"]
    [row] = Contradiction.objects.filter(snapshot=snapshot)
    assert (row.kind, row.state_ref, row.other_ref) == (
        "memory_vs_state",
        "case-service@42",
        "claim#1",
    )


def test_queries_per_reconcile_do_not_grow_with_claims(estate, agent, now):
    seed_account_17(now)

    def queries_for(count: int) -> int:
        claims = [
            Claim(ACCOUNT, "collections_status", "collect", now - timedelta(minutes=5))
            for _ in range(count)
        ]
        with CaptureQueriesContext(connection) as captured:
            snapshot_issue(principal=agent.principal, request=request(*claims))
        return len(captured)

    queries_for(1)  # warm the contract cache
    # Every claim disagrees with state: a first sighting inserts its contradiction rows...
    Contradiction.objects.update(status="resolved")
    many_new = queries_for(300)
    seen_again_many = queries_for(300)  # ...and a retry joins the open ones
    Contradiction.objects.update(status="resolved")
    few_new = queries_for(2)
    seen_again_few = queries_for(2)
    assert (many_new, seen_again_many) == (few_new, seen_again_few)


def test_evidence_recorded_after_the_cutoff_is_not_seen(db, now):
    EvidenceFactory(evidence_id="ev-002")
    cutoff = timezone.now()
    EvidenceFactory(evidence_id="ev-003", value="collect")

    seen = evidence_as_of(subject=ACCOUNT, fields={"collections_status"}, recorded_by=cutoff)

    assert [item.evidence_id for item in seen] == ["ev-002"]


def test_a_revocation_recorded_after_the_cutoff_does_not_withdraw(db, now):
    EvidenceFactory(evidence_id="ev-002")
    cutoff = timezone.now()
    evidence_append(
        kind="correction", subject=ACCOUNT, source="desk", observed_at=now, revokes="ev-002"
    )

    before = evidence_as_of(subject=ACCOUNT, fields={"collections_status"}, recorded_by=cutoff)
    after = evidence_as_of(
        subject=ACCOUNT, fields={"collections_status"}, recorded_by=timezone.now()
    )

    assert [(item.evidence_id, item.withdrawn) for item in before] == [("ev-002", False)]
    assert [(item.evidence_id, item.withdrawn) for item in after] == [("ev-002", True)]


def test_superseded_entries_are_withdrawn(db, now):
    EvidenceFactory(evidence_id="ev-002")
    evidence_append(
        kind="observation",
        subject=ACCOUNT,
        field="collections_status",
        value="hold",
        source="desk",
        observed_at=now,
        supersedes="ev-002",
        evidence_id="ev-003",
    )

    seen = evidence_as_of(
        subject=ACCOUNT, fields={"collections_status"}, recorded_by=timezone.now()
    )

    assert {item.evidence_id: item.withdrawn for item in seen} == {"ev-002": True, "ev-003": False}


def test_evidence_of_other_subjects_and_fields_is_not_seen(db, now):
    EvidenceFactory(evidence_id="ev-a")
    EvidenceFactory(evidence_id="ev-b", subject="account-18")
    EvidenceFactory(evidence_id="ev-c", field="postal_address")

    seen = evidence_as_of(
        subject=ACCOUNT, fields={"collections_status"}, recorded_by=timezone.now()
    )

    assert [item.evidence_id for item in seen] == ["ev-a"]
