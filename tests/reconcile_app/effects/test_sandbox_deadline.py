"""The product waits on the sandbox owner no longer than on one it reaches over HTTP.

A latency fault of 45 s on the sandbox once held an agent's reconcile for 30 s, until
gunicorn killed the worker and the agent got a 500: the in-process adapter slept the whole
fault. It now answers `timeout` at the source's `timeout_ms`, as the HTTP adapter does.
"""

from __future__ import annotations

import time

import pytest

from reconcile_app.choices import ReadStatus
from reconcile_app.models import Effect, Source
from reconcile_app.sources import ApplyOutcome, EffectCommand, adapter_for
from sandbox_app.models import SandboxEffect, SandboxRecord
from sandbox_app.services import sandbox_fault_add
from tests.reconcile_app.effects.conftest import SUBJECT, commit, owner_timeout_set, reconcile

DEADLINE_MS = 300
LATENCY_SECONDS = 5


@pytest.fixture
def slow_case_service(collectible) -> Source:
    """The case service answers in 5 s; the product waits 0.3 s for it."""
    source = owner_timeout_set("case-service", DEADLINE_MS)
    sandbox_fault_add(source="case-service", kind="latency", seconds=LATENCY_SECONDS)
    return source


def test_a_reconcile_reads_timeout_at_the_deadline_not_the_latency(slow_case_service, agent):
    started = time.monotonic()
    snapshot = reconcile(agent)
    waited = time.monotonic() - started

    assert waited < LATENCY_SECONDS / 2
    field = snapshot["fields"]["collections_status"]
    assert field["status"] == ReadStatus.TIMEOUT
    assert "no answer within 0.3 s" in field["detail"]
    assert snapshot["decision"]["result"] != "allow"


def test_a_read_and_a_batch_time_out_alike(slow_case_service):
    adapter = adapter_for(slow_case_service)

    single = adapter.read(SUBJECT, "collections_status")
    sandbox_fault_add(source="case-service", kind="latency", seconds=LATENCY_SECONDS)
    (batched,) = type(adapter).read_batch([(adapter, SUBJECT, "collections_status")])

    assert single.status == batched.status == ReadStatus.TIMEOUT


def test_a_commit_cut_at_the_deadline_is_unknown_and_not_applied(collectible, agent):
    snapshot = reconcile(agent)
    source = owner_timeout_set("case-service", DEADLINE_MS)
    sandbox_fault_add(source="case-service", kind="latency", seconds=LATENCY_SECONDS)
    started = time.monotonic()

    result = adapter_for(source).apply(
        EffectCommand(
            idempotency_key="slow-1",
            subject=SUBJECT,
            field="collections_status",
            action="release_collections_hold",
            resulting_value="released",
            expected_version=snapshot["fields"]["collections_status"]["version"],
        )
    )

    assert time.monotonic() - started < LATENCY_SECONDS / 2
    assert (result.outcome, result.code) == (ApplyOutcome.UNKNOWN, "timeout")
    assert not SandboxEffect.objects.filter(idempotency_key="slow-1").exists()
    record = SandboxRecord.objects.get(
        source="case-service", subject=SUBJECT, field="collections_status"
    )
    assert record.value == "collect"


def test_through_the_api_the_commit_is_an_unknown_outcome_not_a_500(collectible, agent):
    snapshot = reconcile(agent)
    owner_timeout_set("case-service", DEADLINE_MS)
    sandbox_fault_add(source="case-service", kind="latency", seconds=LATENCY_SECONDS)

    response = commit(agent, snapshot, "release_collections_hold", "released", "slow-2")

    assert response.status_code < 500, response.content
    assert Effect.objects.get(idempotency_key="slow-2").status == "unknown"


def test_a_latency_within_the_deadline_is_waited_out(collectible, agent):
    owner_timeout_set("case-service", 3000)
    sandbox_fault_add(source="case-service", kind="latency", seconds=1)
    started = time.monotonic()

    snapshot = reconcile(agent)

    assert time.monotonic() - started >= 1
    assert snapshot["fields"]["collections_status"]["status"] == ReadStatus.OK
