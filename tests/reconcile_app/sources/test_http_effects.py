"""Effects through the `http` adapter against the sandbox served by a real live server.

A timeout after the owner committed must be `unknown` (never `rejected`), and resolution
asks the owner's effect ledger over HTTP, finds the receipt, and the customer is charged once.
"""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.db import connection

from drills_app.bench.cpu import other_sessions
from reconcile_app.models import Effect
from reconcile_app.sources.owner_client import owner_client_reset
from sandbox_app.models import SandboxEffect, SandboxRecord
from sandbox_app.services import sandbox_fault_add
from tests.conftest import sessions_left_open
from tests.factories import ACCOUNT, SandboxRecordFactory, load_yaml
from tests.reconcile_app.sources.test_http import TOKEN_ENV, http_files, reconcile_through_http


@pytest.fixture
def over_http(estate, live_server, tmp_path, operator, monkeypatch, now, eager_tasks):
    # The sandbox answers operators only: an owner token for it is an operator's token.
    monkeypatch.setenv(TOKEN_ENV, operator.key)
    load_yaml(
        tmp_path, http_files(f"{live_server.url}/api/v1/sandbox/case-service/", timeout_ms=1000)
    )
    SandboxRecordFactory(value="collect", version=42, valid_from=now - timedelta(minutes=20))


@pytest.fixture
def http_agent(db):
    from tests.conftest import make_agent

    return make_agent("http-agent", ["http-check:retain_manual_review"])


def commit(persona, snapshot, key):
    return persona.post(
        "/api/v1/effects",
        {
            "snapshot_id": snapshot["snapshot_id"],
            "action": "retain_manual_review",
            "resulting_value": "manual_review",
        },
        HTTP_IDEMPOTENCY_KEY=key,
        HTTP_IF_MATCH=f'"{snapshot["fields"]["collections_status"]["version"]}"',
    )


def state() -> SandboxRecord:
    return SandboxRecord.objects.get(
        source="case-service", subject=ACCOUNT, field="collections_status"
    )


@pytest.mark.django_db(transaction=True)
def test_commit_over_http_is_accepted_and_read_back(over_http, http_agent):
    snapshot = reconcile_through_http(http_agent)
    response = commit(http_agent, snapshot, "h-1")
    assert response.status_code == 201, response.content
    assert response.json()["receipt"]["resulting_version"] == 43
    assert Effect.objects.get(idempotency_key="h-1").status == "verified"
    assert state().value == "manual_review"


@pytest.mark.django_db(transaction=True)
def test_timeout_after_commit_over_http_is_unknown_then_resolved_once(over_http, http_agent):
    snapshot = reconcile_through_http(http_agent)
    # The owner commits, then holds its answer past the adapter's 1 s timeout.
    sandbox_fault_add(source="case-service", kind="timeout_after_commit", count=1, seconds=3)
    response = commit(http_agent, snapshot, "h-2")
    assert response.status_code == 202, response.content
    effect = Effect.objects.get(idempotency_key="h-2")
    # Resolution (eager here) asked the owner's ledger over HTTP and found the receipt.
    assert effect.status == "verified"
    kinds = list(effect.events.values_list("kind", flat=True))
    assert kinds[:3] == ["recorded", "sent", "timeout"] and "resolution" in kinds
    retry = commit(http_agent, snapshot, "h-2")
    assert retry.status_code == 200
    assert retry.json()["receipt"]["resulting_version"] == 43
    assert SandboxEffect.objects.filter(idempotency_key="h-2").count() == 1
    assert state().version == 43


@pytest.mark.django_db(transaction=True)
def test_owner_unreachable_before_sending_is_rejected_not_unknown(over_http, http_agent):
    from reconcile_app.models import Source

    snapshot = reconcile_through_http(http_agent)
    # The owner moves away between decision and commit: the connection is refused, so
    # nothing was sent and nothing can have happened.
    Source.objects.filter(name="case-service-http").update(base_url="http://127.0.0.1:9/")
    response = commit(http_agent, snapshot, "h-3")
    assert (response.status_code, response.json()["code"]) == (503, "owner_unavailable")
    assert Effect.objects.get(idempotency_key="h-3").status == "rejected"
    assert state().version == 42


@pytest.mark.django_db(transaction=True)
def test_a_held_timeout_answer_holds_no_database_session(over_http, http_agent):
    if connection.vendor != "postgresql":
        pytest.skip("only PostgreSQL lists the sessions held on a database")
    snapshot = reconcile_through_http(http_agent)
    sandbox_fault_add(source="case-service", kind="timeout_after_commit", count=1, seconds=5)
    before = {pid for pid, _state, _query in other_sessions()}
    started = time.monotonic()
    assert commit(http_agent, snapshot, "h-3").status_code == 202
    # The adapter keeps its connection for the next call, and the live server a thread (with
    # its session) for the connection: closed here, the one thread left is the held answer's.
    owner_client_reset()
    assert sessions_left_open(grace_seconds=1.0, ignoring=before) == []
    assert time.monotonic() - started < 5, "the owner's answer was no longer held"
