"""The `http` adapter, against the sandbox served by a real live server and against stub owners.

The adapter speaks the owner contract of docs/api.md; the sandbox serves the same contract at
/api/v1/sandbox/{source}/, so reading through HTTP must give exactly what the sandbox holds.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterator
from datetime import timedelta

import httpx
import pytest
from django.utils import timezone
from httpx import create_ssl_context

from reconcile_app.sources.owner_client import owner_client_reset
from sandbox_app.services import sandbox_fault_add
from tests.conftest import make_agent
from tests.factories import ACCOUNT, SandboxRecordFactory, load_yaml
from tests.listeners import silent_listener

# Under the default RECONCILE_SOURCE_TOKEN_ENV_PREFIX: a source may only name such variables.
TOKEN_ENV = "RECONCILE_SOURCE_TOKEN_TEST_CASE_SERVICE"


def http_files(base_url: str, *, timeout_ms: int | None = None) -> dict[str, str]:
    timeout = f"timeout_ms: {timeout_ms}\n" if timeout_ms else ""
    return {
        "case-service-http.yaml": (
            "source: case-service-http\n"
            "owner: servicing-team\n"
            "adapter: http\n"
            f"base_url: {base_url}\n"
            f"auth_token_env: {TOKEN_ENV}\n"
            f"{timeout}"
            "consistency: linearizable\n"
            "expected_lag_seconds: 0\n"
            "fact_classes: [collections_status]\n"
        ),
        "http-check.yaml": """
decision_class: http-check
version: "1"
purpose: collections
required:
  - {field: collections_status, source: case-service-http, max_age_seconds: 300}
actions:
  retain_manual_review: {field: collections_status}
policy:
  version: "http-1"
  deny: [{when: 'fields.collections_status == "hold"', code: hardship_hold}]
  allow: [{when: 'true', permits: [retain_manual_review]}]
""",
    }


def reconcile_through_http(persona) -> dict:
    response = persona.post(
        "/api/v1/reconcile",
        {
            "subject": ACCOUNT,
            "purpose": "collections",
            "decision_class": "http-check",
            "proposed_action": "retain_manual_review",
        },
    )
    assert response.status_code == 201, response.content
    return response.json()


@pytest.fixture
def http_agent(db):
    return make_agent("http-agent", ["http-check:retain_manual_review"])


# --- Against the sandbox, over a real socket ---------------------------------------------------


def test_http_source_reads_what_the_sandbox_holds(
    estate, live_server, tmp_path, http_agent, operator, monkeypatch, now
):
    # The sandbox answers operators only: an owner token for it is an operator's token.
    monkeypatch.setenv(TOKEN_ENV, operator.key)
    load_yaml(tmp_path, http_files(f"{live_server.url}/api/v1/sandbox/case-service/"))
    SandboxRecordFactory(value="hold", version=42, valid_from=now - timedelta(minutes=20))
    direct = operator.client.get(
        f"/api/v1/sandbox/case-service/records/{ACCOUNT}/collections_status"
    ).json()

    body = reconcile_through_http(http_agent)

    field = body["fields"]["collections_status"]
    assert field["status"] == "ok"
    assert field["source"] == "case-service-http"
    assert (
        (field["value"], field["version"]) == (direct["value"], direct["version"]) == ("hold", 42)
    )
    assert field["valid_from"] == direct["valid_from"]
    assert field["recorded_at"] == direct["recorded_at"]
    assert body["decision"]["result"] == "deny"
    assert [r["code"] for r in body["decision"]["reasons"]] == ["hardship_hold"]


def test_http_source_sees_a_new_sandbox_version(
    estate, live_server, tmp_path, http_agent, operator, monkeypatch
):
    monkeypatch.setenv(TOKEN_ENV, operator.key)
    load_yaml(tmp_path, http_files(f"{live_server.url}/api/v1/sandbox/case-service"))
    SandboxRecordFactory(value="hold", version=42)
    operator.client.put(
        f"/api/v1/sandbox/case-service/records/{ACCOUNT}/collections_status",
        {"value": "manual_review"},
        format="json",
    )

    field = reconcile_through_http(http_agent)["fields"]["collections_status"]

    assert (field["value"], field["version"]) == ("manual_review", 43)


def test_http_source_judges_freshness_on_the_owners_observed_at(
    estate, live_server, tmp_path, http_agent, operator, monkeypatch
):
    monkeypatch.setenv(TOKEN_ENV, operator.key)
    load_yaml(tmp_path, http_files(f"{live_server.url}/api/v1/sandbox/case-service/"))
    SandboxRecordFactory(value="collect", version=5)
    sandbox_fault_add(source="case-service", kind="lag", seconds=900)

    body = reconcile_through_http(http_agent)

    assert body["fields"]["collections_status"]["status"] == "stale"
    assert body["decision"]["result"] == "refuse"
    assert "stale_state" in [r["code"] for r in body["decision"]["reasons"]]


def test_http_source_without_credentials_is_unavailable(
    estate, live_server, tmp_path, http_agent, monkeypatch
):
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    load_yaml(tmp_path, http_files(f"{live_server.url}/api/v1/sandbox/case-service/"))
    SandboxRecordFactory(value="collect", version=5)

    body = reconcile_through_http(http_agent)

    assert body["fields"]["collections_status"]["status"] == "unavailable"
    assert body["fields"]["collections_status"]["value"] is None
    assert body["decision"]["result"] == "refuse"


def test_an_agents_key_opens_no_door_into_the_sandbox_owner(
    estate, live_server, tmp_path, http_agent, agent, monkeypatch
):
    """An agent's key is refused by the sandbox (people only), so an http source pointed at
    the sandbox with it reads nothing, and a commit through it would reach nothing."""
    monkeypatch.setenv(TOKEN_ENV, agent.key)
    load_yaml(tmp_path, http_files(f"{live_server.url}/api/v1/sandbox/case-service/"))
    SandboxRecordFactory(value="collect", version=5)

    body = reconcile_through_http(http_agent)

    field = body["fields"]["collections_status"]
    assert (field["status"], field["value"]) == ("unavailable", None)
    assert "403" in field["detail"]
    assert body["decision"]["result"] == "refuse"


def test_http_source_unavailable_owner_refuses(
    estate, live_server, tmp_path, http_agent, operator, monkeypatch
):
    monkeypatch.setenv(TOKEN_ENV, operator.key)
    load_yaml(tmp_path, http_files(f"{live_server.url}/api/v1/sandbox/case-service/"))
    SandboxRecordFactory(value="collect", version=5)
    sandbox_fault_add(source="case-service", kind="unavailable")

    body = reconcile_through_http(http_agent)

    assert body["fields"]["collections_status"]["status"] == "unavailable"
    assert body["decision"]["result"] == "refuse"
    assert next(r["code"] for r in body["decision"]["reasons"]) == "state_unavailable"


# --- Owners that do not answer -----------------------------------------------------------------


def test_closed_port_is_unavailable_and_refused(db, tmp_path, http_agent):
    load_yaml(tmp_path, http_files("http://127.0.0.1:9/", timeout_ms=500))

    body = reconcile_through_http(http_agent)

    field = body["fields"]["collections_status"]
    assert field["status"] in ("unavailable", "timeout")
    assert (field["value"], field["version"]) == (None, None)
    assert body["decision"]["result"] == "refuse"
    assert next(r["code"] for r in body["decision"]["reasons"]) == "state_unavailable"
    assert body["completeness"] == "incomplete"


@pytest.fixture
def silent_owner() -> Iterator[str]:
    """Accepts TCP connections and never answers."""
    with silent_listener() as port:
        yield f"http://127.0.0.1:{port}/"


def test_owner_that_never_answers_times_out_and_is_refused(db, tmp_path, http_agent, silent_owner):
    load_yaml(tmp_path, http_files(silent_owner, timeout_ms=300))

    body = reconcile_through_http(http_agent)

    assert body["fields"]["collections_status"]["status"] == "timeout"
    assert body["fields"]["collections_status"]["value"] is None
    assert body["decision"]["result"] == "refuse"
    assert next(r["code"] for r in body["decision"]["reasons"]) == "state_unavailable"


# --- Owners that answer badly ------------------------------------------------------------------


def record(**overrides: object) -> dict:
    now = timezone.now().isoformat().replace("+00:00", "Z")
    body = {
        "value": "collect",
        "version": 9,
        "valid_from": now,
        "recorded_at": now,
        "observed_at": now,
    }
    body.update(overrides)
    return body


def test_well_formed_stub_owner_is_read(db, tmp_path, http_agent, stub_owner):
    load_yaml(tmp_path, http_files(stub_owner.url))
    stub_owner.body = record()

    body = reconcile_through_http(http_agent)

    field = body["fields"]["collections_status"]
    assert (field["status"], field["value"], field["version"]) == ("ok", "collect", 9)
    assert body["decision"]["result"] == "allow"


def test_owner_calls_share_one_trust_store_per_process(
    db, tmp_path, http_agent, stub_owner, monkeypatch
):
    # Loading the CA bundle costs tens of milliseconds of CPU: once per process, not per call.
    built: list[ssl.SSLContext] = []

    def counted() -> ssl.SSLContext:
        built.append(context := create_ssl_context())
        return context

    monkeypatch.setattr(httpx, "create_ssl_context", counted)
    owner_client_reset(trust_store=True)
    load_yaml(tmp_path, http_files(stub_owner.url))
    stub_owner.body = record()
    try:
        for _ in range(3):
            reconcile_through_http(http_agent)
            owner_client_reset()  # a new client each time: the store must still be the one
    finally:
        owner_client_reset(trust_store=True)

    assert len(stub_owner.requests) >= 3
    assert len(built) == 1


@pytest.mark.parametrize(
    ("status", "answer"),
    [
        (200, b"<html>not json</html>"),
        (200, ["a", "list"]),
        (200, {"value": "collect"}),
        (200, {"value": "collect", "version": "nine"}),
        (200, b'{"value": "collect", "version": 1e999}'),
        (200, {"value": "collect", "version": 42.9}),
        (200, {"value": "collect", "version": True}),
        (200, {"value": "collect", "version": -1}),
        (200, {"value": "collect", "version": 2**63}),
        (200, {"value": "collect", "version": " 42"}),
        (500, {"detail": "boom"}),
        (404, {"detail": "no such record"}),
    ],
    ids=[
        "html",
        "list",
        "no-version",
        "bad-version",
        "infinite-version",
        "fractional-version",
        "boolean-version",
        "negative-version",
        "version-past-64-bits",
        "padded-version",
        "server-error",
        "not-found",
    ],
)
def test_malformed_owner_answers_are_unavailable(
    db, tmp_path, http_agent, stub_owner, status, answer
):
    load_yaml(tmp_path, http_files(stub_owner.url))
    stub_owner.status, stub_owner.body = status, answer

    body = reconcile_through_http(http_agent)

    assert body["fields"]["collections_status"]["status"] == "unavailable"
    assert body["fields"]["collections_status"]["value"] is None
    assert body["decision"]["result"] == "refuse"


@pytest.mark.parametrize(
    "value",
    ['"a\\u0000b"', '"\\ud800"', "[" * 600 + "]" * 600, "[" * 101 + "]" * 101],
    ids=["nul", "lone-surrogate", "nested-600", "nested-past-the-limit"],
)
def test_an_owner_value_no_store_keeps_is_unavailable_not_a_server_error(
    db, tmp_path, http_agent, stub_owner, value
):
    # Read `ok`, the NUL and the 600 levels then failed the snapshot's write or hash: 500.
    load_yaml(tmp_path, http_files(stub_owner.url))
    stub_owner.body = json.dumps(record(value="VALUE")).replace('"VALUE"', value).encode()

    body = reconcile_through_http(http_agent)

    field = body["fields"]["collections_status"]
    assert (field["status"], field["value"]) == ("unavailable", None)
    assert body["decision"]["result"] == "refuse"


def test_owner_without_observed_at_cannot_be_shown_fresh(db, tmp_path, http_agent, stub_owner):
    load_yaml(tmp_path, http_files(stub_owner.url))
    stub_owner.body = record(observed_at=None)

    body = reconcile_through_http(http_agent)

    assert body["fields"]["collections_status"]["status"] == "stale"
    assert body["decision"]["result"] == "refuse"


@pytest.mark.parametrize(
    "observed_at",
    ["2026-13-45T99:00:00Z", "2026-02-30T10:00:00Z", "naive"],
    ids=["impossible-date", "february-30", "no-timezone"],
)
def test_owner_sending_a_bad_timestamp_does_not_crash_reconcile(
    db, tmp_path, http_agent, stub_owner, observed_at
):
    """An owner's bad data is the owner's failure: fail closed, never a 500."""
    load_yaml(tmp_path, http_files(stub_owner.url))
    if observed_at == "naive":
        observed_at = timezone.now().replace(tzinfo=None).isoformat()
    stub_owner.body = record(observed_at=observed_at)

    response = http_agent.post(
        "/api/v1/reconcile",
        {
            "subject": ACCOUNT,
            "purpose": "collections",
            "decision_class": "http-check",
            "proposed_action": "retain_manual_review",
        },
    )

    assert response.status_code == 201, response.content
    assert response.json()["fields"]["collections_status"]["status"] in (
        "ok",
        "unavailable",
        "stale",
    )
