"""`bench reconcile`: latency of the reconcile service and endpoint, and queries per call;
with `--profile`, where one endpoint call's time goes (cProfile, in this process)."""

from __future__ import annotations

import cProfile
import io
import json
import pstats
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from io import TextIOBase
from unittest.mock import patch

from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from drills_app.bench.estate import (
    bench_account,
    bench_agent,
    bench_past_decisions,
    bench_request,
    reconcile_body,
)
from lineage_app.bench.measuring import percentiles, timed
from reconcile_app.reconciliation.types import Claim
from reconcile_app.security import PrincipalRateThrottle
from reconcile_app.services.reconcile import ReconcileRequest, snapshot_issue


def _claims(count: int, subject: str, now: datetime) -> list[Claim]:
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


def run(out: TextIOBase, repeat: int, *, profile: bool = False, past_decisions: int = 0) -> None:
    # The endpoint runs its throttle as in production, at a rate these calls cannot reach
    # (`bench http` gives its server RECONCILE_API_RATE the same way).
    unreachable = {**PrincipalRateThrottle.THROTTLE_RATES, "principal": "100000000/min"}
    with patch.object(PrincipalRateThrottle, "THROTTLE_RATES", unreachable):
        _run(out, repeat, profile=profile, past_decisions=past_decisions)


def _run(out: TextIOBase, repeat: int, *, profile: bool, past_decisions: int) -> None:
    principal, key = bench_agent()
    subject = "bench-account"
    # Claims are dated from just before the estate is made, not from each call: a claim
    # written 4 hours back is superseded by the evidence observed 4 hours back plus a second
    # only within a second of the estate's making, and contradicted (one more row to write)
    # after it. Dated per call, a slow run changed which claims contradict between the
    # counts it compares.
    estate_made = timezone.now()
    bench_account(subject)
    bench_past_decisions(principal, subject, past_decisions)

    def request(claims: int) -> ReconcileRequest:
        return bench_request(subject, _claims(claims, subject, estate_made))

    # Warm caches (contract spec, compiled CEL) so figures show steady state.
    for _ in range(5):
        snapshot_issue(principal=principal, request=request(1))

    out.write(
        f"reconcile benchmark ({connection.vendor}, sandbox sources, {repeat} runs each, "
        f"{past_decisions} decisions issued before)\n"
    )
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
        body = json.dumps(reconcile_body(subject, _claims(claims, subject, estate_made)))

        def call(body: str = body) -> None:
            response = client.post(
                "/api/v1/reconcile", body, content_type="application/json", headers=auth
            )
            assert response.status_code == 201, response.content

        p50, p95 = percentiles(timed(call, repeat))
        out.write(f"{'API endpoint, ' + str(claims) + ' claim(s)':<34}{p50:>10.2f}{p95:>10.2f}\n")
        if claims == 1:
            endpoint_call = call

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
    if profile:
        _profile(out, endpoint_call, repeat)


def _profile(out: TextIOBase, call: Callable[[], None], repeat: int) -> None:
    """CPU per call, then the functions where `repeat` endpoint calls spend their time."""
    started, cpu = time.perf_counter(), time.process_time()
    for _ in range(repeat):
        call()
    wall_ms = (time.perf_counter() - started) / repeat * 1000
    cpu_ms = (time.process_time() - cpu) / repeat * 1000
    out.write(f"\nAPI endpoint, 1 claim: {wall_ms:.2f} ms per call, {cpu_ms:.2f} ms of it CPU\n")
    profiler = cProfile.Profile()

    def calls() -> None:
        for _ in range(repeat):
            call()

    profiler.runcall(calls)
    text = io.StringIO()
    stats = pstats.Stats(profiler, stream=text).sort_stats("cumulative")
    stats.print_stats(r"/(reconcile_app|config|sandbox_app|lineage_app)/", 50)
    out.write(f"cProfile, {repeat} calls (cumulative; the project's functions):\n{text.getvalue()}")
