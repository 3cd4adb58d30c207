"""The accounts and agent the gate benchmarks act on: sandbox owners, evidence, a principal."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from django.db import connection, transaction
from django.utils import timezone

from reconcile_app.canonical import content_hash
from reconcile_app.demo.estate_loader import ESTATE_DIR
from reconcile_app.models import EvidenceEntry, LedgerHead, Principal
from reconcile_app.reconciliation.types import Claim
from reconcile_app.services.contracts import contracts_load
from reconcile_app.services.evidence import entry_hash_content, evidence_append
from reconcile_app.services.evidence_support import evidence_support_rebuild
from reconcile_app.services.principals import principal_create
from reconcile_app.services.reconcile import ReconcileRequest, snapshot_issue
from sandbox_app.services import sandbox_record_write

DECISION_CLASS = "collections-contact-release"
ACTION = "release_collections_hold"


def bench_agent() -> tuple[Principal, str]:
    """The demo contracts, and an agent allowed to release collection holds: (principal, key)."""
    contracts_load(paths=[str(ESTATE_DIR)])
    return principal_create(name="bench-agent", capabilities=[f"{DECISION_CLASS}:{ACTION}"])


def bench_account(subject: str, *, version: int = 42, evidence: int = 2) -> None:
    """One account as its owners hold it: collections `collect` at `version`, no complaint,
    and `evidence` observations of its collections status in the ledger."""
    now = timezone.now()
    sandbox_record_write(
        source="case-service",
        subject=subject,
        field="collections_status",
        value="collect",
        version=version,
        valid_from=now - timedelta(minutes=20),
    )
    sandbox_record_write(
        source="complaints-service",
        subject=subject,
        field="complaint_status",
        value="none",
        valid_from=now - timedelta(days=3),
    )
    for index in range(evidence):
        evidence_append(
            kind="observation",
            subject=subject,
            field="collections_status",
            value=("hold", "collect")[index % 2],
            source="case-ledger",
            evidence_id=f"ev-{subject}-{index + 1}",
            observed_at=now - timedelta(hours=4, seconds=-index),
        )


def bench_history(subject: str, entries: int) -> None:
    """`entries` older observations of the account's collections status, chained onto the
    ledger exactly as `evidence_append` would chain them, in batches (a 100,000-entry
    history takes seconds rather than minutes); the support index is then rebuilt."""
    now = timezone.now()
    with transaction.atomic():
        head, _ = LedgerHead.objects.select_for_update().get_or_create(pk=1)
        batch: list[EvidenceEntry] = []
        for index in range(entries):
            entry = EvidenceEntry(
                seq=head.seq + 1,
                evidence_id=f"ev-{subject}-h{index}",
                kind="observation",
                subject=subject,
                field="collections_status",
                value=("hold", "collect")[index % 2],
                source="case-ledger",
                observed_at=now - timedelta(days=60, seconds=entries - index),
                recorded_at=now,
                derived_from=[],
                prev_hash=head.hash,
            )
            entry.hash = content_hash(entry_hash_content(entry))
            head.seq, head.hash = entry.seq, entry.hash
            batch.append(entry)
            if len(batch) == 5000:
                EvidenceEntry.objects.bulk_create(batch)
                batch = []
        EvidenceEntry.objects.bulk_create(batch)
        head.save(update_fields=["seq", "hash"])
    evidence_support_rebuild(subject=subject)


def bench_past_decisions(principal: Principal, subject: str, count: int) -> None:
    """`count` decisions on the account issued through the gate's own service, as a gate in
    production has behind it, then the statistics PostgreSQL's autovacuum would have gathered
    on them (ANALYZE: a scratch database is too young for autovacuum's, and the CI machines'
    PostgreSQL runs with autovacuum off). None (0) leaves the database as it was.

    Without them the load meets tables a few rows long with no statistics: the plans a
    connection makes then, and keeps (the foreign-key checks' among them), scan the tables
    whole as they grow under the load. PostgreSQL's CPU per reconcile rose 2.8 → 4.0 → 5.3 ms
    over three rounds of 400 (about 3 ms per 1,000 decisions), a cost no production database
    pays; with them it stays at 1.6-2.2 ms."""
    request = bench_request(subject, bench_claims(subject))  # what `reconcile_body` sends
    for _ in range(count):
        snapshot_issue(principal=principal, request=request)
    if count and connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


def bench_request(subject: str, claims: Sequence[Claim] = ()) -> ReconcileRequest:
    """The release of the account's collections hold, and what the agent's memory says."""
    return ReconcileRequest(
        subject=subject,
        purpose="collections",
        decision_class=DECISION_CLASS,
        proposed_action=ACTION,
        claims=claims,
    )


def bench_claims(subject: str, count: int = 1) -> list[Claim]:
    """`count` remembered collections statuses of the account, hold and collect in turn."""
    now = timezone.now()
    return [
        Claim(
            subject=subject,
            field="collections_status",
            value=("hold", "collect")[index % 2],
            written_at=now - timedelta(hours=index % 7 + 1),
            memory_class="episodic",
            derived_from=(f"ev-{subject}-1",),
        )
        for index in range(count)
    ]


def reconcile_body(subject: str, claims: int | Sequence[Claim] = 1) -> dict[str, object]:
    """`bench_request` as an agent sends it: with `claims` of `bench_claims`, or these."""
    sent = bench_claims(subject, claims) if isinstance(claims, int) else claims
    return {
        "subject": subject,
        "purpose": "collections",
        "decision_class": DECISION_CLASS,
        "proposed_action": ACTION,
        "claims": [
            {
                "subject": claim.subject,
                "field": claim.field,
                "value": claim.value,
                "written_at": claim.written_at.isoformat() if claim.written_at else None,
                "memory_class": claim.memory_class,
                "derived_from": list(claim.derived_from),
            }
            for claim in sent
        ],
    }
