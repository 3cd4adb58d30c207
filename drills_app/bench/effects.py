"""`bench effects`: commit latency, and 10,000 commits with retries under injected timeouts.

Every commit follows the protocol: reconcile (fresh allow snapshot at the current version),
commit with a new Idempotency-Key, and on `unknown` retry with the same key — which asks the
owner's ledger instead of re-sending. Duplicate effects are version increments beyond the
number of distinct accepted commands; they must be 0.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from io import TextIOBase

from django.db.models import Count
from django.utils import timezone

from lineage_app.bench.measuring import percentiles
from reconcile_app import tasks
from reconcile_app.choices import EffectStatus
from reconcile_app.demo.estate_loader import ESTATE_DIR
from reconcile_app.models import Effect
from reconcile_app.services.contracts import contracts_load
from reconcile_app.services.effects import effect_commit, effect_readback
from reconcile_app.services.evidence import evidence_append
from reconcile_app.services.principals import principal_create
from reconcile_app.services.reconcile import ReconcileRequest, snapshot_issue
from sandbox_app.models import SandboxEffect, SandboxRecord
from sandbox_app.services import sandbox_fault_add, sandbox_record_write

DECISION_CLASS = "collections-contact-release"
SUBJECT = "bench-account"
SUBJECTS = 200
TIMEOUT_RATE = 0.30
MAX_ATTEMPTS = 5


@contextmanager
def collected_readbacks() -> Iterator[list[int]]:
    """Collect readback enqueues instead of publishing them, to time the commit alone."""
    queued: list[int] = []
    original = tasks.effect_readback_task.delay
    tasks.effect_readback_task.delay = lambda effect_id: queued.append(effect_id)  # type: ignore[method-assign]
    resolve_original = tasks.effect_resolve_task.delay
    tasks.effect_resolve_task.delay = lambda effect_id: None  # type: ignore[method-assign]
    try:
        yield queued
    finally:
        tasks.effect_readback_task.delay = original  # type: ignore[method-assign]
        tasks.effect_resolve_task.delay = resolve_original  # type: ignore[method-assign]


def run(out: TextIOBase, repeat: int, commits: int = 10_000) -> None:
    contracts_load(paths=[str(ESTATE_DIR)])
    principal, _ = principal_create(
        name="bench-agent", capabilities=[f"{DECISION_CLASS}:release_collections_hold"]
    )
    now = timezone.now()
    # Commits rotate over many accounts, as production traffic does: each account's history
    # (receipts, readbacks) stays the size a real account's would, not 10,000 entries deep.
    subjects = [f"{SUBJECT}-{number:03d}" for number in range(SUBJECTS)]
    for subject in subjects:
        sandbox_record_write(
            source="complaints-service",
            subject=subject,
            field="complaint_status",
            value="none",
            valid_from=now - timedelta(days=1),
        )
        for value in ("collect", "released"):
            evidence_append(
                kind="observation",
                subject=subject,
                field="collections_status",
                value=value,
                source="case-ledger",
                observed_at=now - timedelta(hours=1),
            )
        sandbox_record_write(
            source="case-service",
            subject=subject,
            field="collections_status",
            value="collect",
            version=1,
            valid_from=now - timedelta(hours=1),
        )
    requests = {
        subject: ReconcileRequest(
            subject=subject,
            purpose="collections",
            decision_class=DECISION_CLASS,
            proposed_action="release_collections_hold",
        )
        for subject in subjects
    }
    changes = dict.fromkeys(subjects, 0)
    rng = random.Random(20261129)  # noqa: S311 - a reproducible fault schedule, not a secret
    latencies: list[float] = []
    outcomes: Counter[str] = Counter()
    attempts_total = 0
    verified = readbacks = 0
    started = time.perf_counter()
    with collected_readbacks() as queued:
        for index in range(commits):
            subject = subjects[index % SUBJECTS]
            snapshot = snapshot_issue(principal=principal, request=requests[subject])
            version = snapshot.content["fields"]["collections_status"]["version"]
            # Alternate the value so every commit is a real change.
            value = "released" if changes[subject] % 2 == 0 else "collect"
            changes[subject] += 1
            if snapshot.result != "allow":
                outcomes[f"not allowed ({snapshot.result})"] += 1
                continue
            key = f"bench-{index}"
            if rng.random() < TIMEOUT_RATE:
                sandbox_fault_add(source="case-service", kind="timeout_after_commit", count=1)
            for attempt in range(MAX_ATTEMPTS):
                attempts_total += 1
                t0 = time.perf_counter()
                result = effect_commit(
                    principal=principal,
                    idempotency_key=key,
                    if_match=f'"{version}"',
                    snapshot_id=snapshot.snapshot_id,
                    action="release_collections_hold",
                    resulting_value=value,
                )
                if attempt == 0:
                    latencies.append((time.perf_counter() - t0) * 1000.0)
                if result.effect.status != EffectStatus.UNKNOWN:
                    break
            # The worker's readback, run here (untimed) before the next command moves the state.
            while queued:
                verified += effect_readback(effect_id=queued.pop()).status == EffectStatus.VERIFIED
                readbacks += 1
            outcomes[str(result.effect.status)] += 1
        elapsed = time.perf_counter() - started

    accepted_keys = SandboxEffect.objects.filter(source="case-service").count()
    # Every account started at version 1; each executed command added exactly one.
    versions_moved = sum(
        version - 1
        for version in SandboxRecord.objects.filter(
            source="case-service", subject__in=subjects, field="collections_status"
        ).values_list("version", flat=True)
    )
    duplicate_effects = versions_moved - accepted_keys
    keys_with_two_effects = (
        Effect.objects.values("idempotency_key").annotate(n=Count("id")).filter(n__gt=1).count()
    )
    limbo = Effect.objects.filter(status__in=[EffectStatus.RECORDED, EffectStatus.SENT]).count()
    p50, p95 = percentiles(latencies)
    sample = latencies[: max(1, min(repeat, len(latencies)))]
    s50, s95 = percentiles(sample)
    out.write(
        f"effects benchmark: {commits} commits over {SUBJECTS} accounts, "
        f"{TIMEOUT_RATE:.0%} timeout_after_commit, "
        f"retry with the same key up to {MAX_ATTEMPTS} times\n"
    )
    out.write(f"commit latency (first attempt)      p50 {p50:7.2f} ms   p95 {p95:7.2f} ms\n")
    out.write(f"  first {len(sample)} commits          p50 {s50:7.2f} ms   p95 {s95:7.2f} ms\n")
    out.write(
        f"wall time {elapsed:.1f} s (incl. reconcile per commit); attempts {attempts_total}\n"
    )
    final = dict(Effect.objects.values_list("status").annotate(n=Count("id")).order_by("status"))
    out.write(f"outcome after retries: {dict(sorted(outcomes.items()))}\n")
    out.write(f"final statuses after readbacks: {final}\n")
    out.write(f"readbacks: {readbacks}, verified {verified}\n")
    out.write(f"duplicate effects at the owner: {duplicate_effects} (must be 0)\n")
    out.write(f"idempotency keys with two effect rows: {keys_with_two_effects} (must be 0)\n")
    out.write(f"effects without a final or unknown status: {limbo} (must be 0)\n")
