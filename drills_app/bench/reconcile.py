"""`bench reconcile`: latency of the reconcile service and endpoint, and queries per call."""

from __future__ import annotations

import json
from datetime import timedelta
from io import TextIOBase

from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from drills_app.bench.estate import DECISION_CLASS, bench_account, bench_agent
from lineage_app.bench.measuring import percentiles, timed
from reconcile_app.reconciliation.types import Claim
from reconcile_app.services.reconcile import ReconcileRequest, snapshot_issue


def _claims(count: int, subject: str) -> list[Claim]:
    now = timezone.now()
    # Every size mixes the same kinds of claim (contradicted first, so even one claim writes
    # a contradiction row): query counts then compare like with like.
    values = ("manual_review", "collect", "hold")
    return [
        Claim(
            subject="someone-else" if index % 5 == 4 else subject,
            field="collections_status",
            value=values[index % 3],
            written_at=now - timedelta(hours=index % 7),
            memory_class="episodic",
            derived_from=(f"ev-{subject}-1",),
            note=f"claim {index}",
        )
        for index in range(count)
    ]


def run(out: TextIOBase, repeat: int) -> None:
    principal, key = bench_agent()
    subject = "bench-account"
    bench_account(subject)

    def request(claims: int) -> ReconcileRequest:
        return ReconcileRequest(
            subject=subject,
            purpose="collections",
            decision_class=DECISION_CLASS,
            proposed_action="release_collections_hold",
            claims=_claims(claims, subject),
        )

    # Warm caches (contract spec, compiled CEL) so figures show steady state.
    for _ in range(5):
        snapshot_issue(principal=principal, request=request(1))

    out.write(f"reconcile benchmark ({connection.vendor}, sandbox sources, {repeat} runs each)\n")
    out.write(f"{'what':<34}{'p50 ms':>10}{'p95 ms':>10}\n")
    for claims in (1, 10, 100):
        prepared = request(claims)

        def issue(prepared: ReconcileRequest = prepared) -> None:
            snapshot_issue(principal=principal, request=prepared)

        samples = timed(issue, repeat)
        p50, p95 = percentiles(samples)
        out.write(f"{'service, ' + str(claims) + ' claim(s)':<34}{p50:>10.2f}{p95:>10.2f}\n")

    client = Client()
    auth = {"Authorization": f"Bearer {key}"}
    for claims in (1, 10, 100):
        body = json.dumps(
            {
                "subject": subject,
                "purpose": "collections",
                "decision_class": DECISION_CLASS,
                "proposed_action": "release_collections_hold",
                "claims": [
                    {
                        "subject": c.subject,
                        "field": c.field,
                        "value": c.value,
                        "written_at": c.written_at.isoformat() if c.written_at else None,
                        "memory_class": c.memory_class,
                        "derived_from": list(c.derived_from),
                    }
                    for c in _claims(claims, subject)
                ],
            }
        )

        def call(body: str = body) -> None:
            response = client.post(
                "/api/v1/reconcile", body, content_type="application/json", headers=auth
            )
            assert response.status_code == 201, response.content

        p50, p95 = percentiles(timed(call, repeat))
        out.write(f"{'API endpoint, ' + str(claims) + ' claim(s)':<34}{p50:>10.2f}{p95:>10.2f}\n")

    out.write("\nSQL queries per reconcile (service)\n")
    counts = {}
    for claims in (1, 10, 100):
        prepared = request(claims)
        with CaptureQueriesContext(connection) as captured:
            snapshot_issue(principal=principal, request=prepared)
        counts[claims] = len(captured.captured_queries)
        out.write(f"  {claims:>3} claim(s): {counts[claims]} queries\n")
    verdict = "constant" if len(set(counts.values())) == 1 else "GROWS with claims"
    out.write(f"query count vs claims: {verdict}\n")
