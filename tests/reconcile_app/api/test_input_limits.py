"""docs/api.md "Input limits": bodies, single values, identifiers, and text taken as typed.

Each refusal is a problem+json with a stable code, and nothing is written.
"""

from __future__ import annotations

import io
import json
import sys
from typing import Any

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections

from reconcile_app.limits import identifier_problem
from reconcile_app.models import (
    AuditEvent,
    Correction,
    DecisionSnapshot,
    Effect,
    EvidenceEntry,
    MemoryRecord,
    Quarantine,
)
from tests.factories import ACCOUNT, EvidenceFactory, claim, reconcile_body, seed_collectible

BIG = "x" * (64 * 1024 + 1)


def problem(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == code
    return body


# --- Bodies -----------------------------------------------------------------------------------


def test_a_body_over_the_limit_is_413_before_anything_reads_it(estate, agent, now):
    seed_collectible(now)
    padded = reconcile_body(claims=[claim("collect", written_at=now, note="n" * 1900)] * 600)
    raw = json.dumps(padded)
    assert len(raw) > 1024 * 1024

    response = agent.client.post("/api/v1/reconcile", raw, content_type="application/json")

    body = problem(response, 413, "payload_too_large")
    assert body["limit"] == 1024 * 1024
    assert not DecisionSnapshot.objects.exists()


def test_the_body_limit_is_a_setting(estate, agent, settings, now):
    seed_collectible(now)
    settings.RECONCILE_MAX_BODY_BYTES = 100
    response = agent.post("/api/v1/reconcile", reconcile_body())
    problem(response, 413, "payload_too_large")


def test_a_console_form_over_the_limit_is_413_too(client, settings, db):
    settings.RECONCILE_MAX_BODY_BYTES = 100
    response = client.post("/accounts/login/", {"username": "u" * 200, "password": "p"})
    assert response.status_code == 413


def _wsgi_chunked(path: str, body: bytes, headers: dict[str, str]) -> tuple[str, bytes]:
    """A request as a WSGI server hands over a chunked body: the body readable, its length
    never stated (gunicorn decodes the chunks and sets no CONTENT_LENGTH)."""
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": path,
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "CONTENT_TYPE": "application/json",
        "HTTP_TRANSFER_ENCODING": "chunked",
        **headers,
    }
    answered: list[str] = []

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        answered.append(status)
        return lambda data: None

    # As Django's test client does: the test's connection (and its transaction) stays open.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        response = WSGIHandler()(environ, start_response)
        content = b"".join(response)
        response.close()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)
    return answered[0], content


def test_a_chunked_body_is_411_not_read_as_empty(estate, agent, now):
    # It used to be read as no body at all: 400 "this field is required" about a body that
    # held every field.
    seed_collectible(now)
    status, content = _wsgi_chunked(
        "/api/v1/reconcile",
        json.dumps(reconcile_body()).encode(),
        {"HTTP_AUTHORIZATION": f"Bearer {agent.key}"},
    )

    assert status.startswith("411")
    assert json.loads(content)["code"] == "length_required"
    assert not DecisionSnapshot.objects.exists()


def test_a_chunked_console_form_is_411_too(db):
    status, _ = _wsgi_chunked("/accounts/login/", b"username=u&password=p", {})
    assert status.startswith("411")


# --- Single values ----------------------------------------------------------------------------


def test_a_claim_value_over_64_kib_is_422(estate, agent, now):
    seed_collectible(now)
    response = agent.post("/api/v1/reconcile", reconcile_body(claims=[claim(BIG, written_at=now)]))
    body = problem(response, 422, "value_too_large")
    assert body["limit"] == 64 * 1024
    assert not DecisionSnapshot.objects.exists()


def test_an_evidence_value_over_64_kib_is_422(estate, operator, now):
    response = operator.post(
        "/api/v1/evidence",
        {
            "kind": "observation",
            "subject": ACCOUNT,
            "field": "collections_status",
            "value": {"blob": BIG},
            "source": "case-ledger",
            "observed_at": "2026-11-01T00:00:00Z",
        },
    )
    problem(response, 422, "value_too_large")
    assert not EvidenceEntry.objects.exists()


def test_a_memory_value_over_64_kib_is_422(estate, agent):
    EvidenceFactory(evidence_id="ev-1")
    response = agent.post(
        "/api/v1/memories",
        {
            "memory_class": "episodic",
            "subject": ACCOUNT,
            "purpose": "collections",
            "field": "collections_status",
            "value": [BIG],
            "derived_from": ["ev-1"],
        },
    )
    problem(response, 422, "value_too_large")
    assert not MemoryRecord.objects.exists()


def test_an_effect_value_over_64_kib_is_422(estate, agent, now):
    seed_collectible(now)
    snapshot = agent.post("/api/v1/reconcile", reconcile_body()).json()
    response = agent.post(
        "/api/v1/effects",
        {
            "snapshot_id": snapshot["snapshot_id"],
            "action": "release_collections_hold",
            "resulting_value": BIG,
        },
        HTTP_IDEMPOTENCY_KEY="k-big",
        HTTP_IF_MATCH='"7"',
    )
    problem(response, 422, "value_too_large")
    assert not Effect.objects.exists()


def test_a_value_of_exactly_64_kib_is_accepted(estate, agent, now):
    seed_collectible(now)
    exact = "x" * (64 * 1024 - 2)  # plus its two quotes
    response = agent.post(
        "/api/v1/reconcile", reconcile_body(claims=[claim(exact, written_at=now)])
    )
    assert response.status_code == 201, response.content


# --- Identifiers ------------------------------------------------------------------------------


def test_no_whitespace_or_unprintable_character_makes_an_identifier():
    refused = [
        code
        for code in range(sys.maxunicode + 1)
        if identifier_problem(f"a{chr(code)}b")
        == "may not contain whitespace or control characters"
    ]
    expected = [
        code
        for code in range(sys.maxunicode + 1)
        if chr(code).isspace() or not chr(code).isprintable()
    ]
    assert refused == expected
    assert 0x20 in refused and 0x3000 in refused and 0xA0 in refused  # space, ideographic, NBSP


@pytest.mark.parametrize(
    "subject", ["..", ".", "a/b", "a\\b", "a b", "tab\there", "nul\x01", "", "s" * 201, 17]
)
def test_a_malformed_subject_is_400_invalid_identifier(estate, agent, subject):
    response = agent.post("/api/v1/reconcile", {**reconcile_body(), "subject": subject})
    assert response.status_code == 400, response.content
    # An empty subject too: API.md's identifiers are 1-200 characters, else
    # `invalid_identifier` (it was DRF's generic "may not be blank", `invalid_request`).
    assert response.json()["code"] == "invalid_identifier"
    assert not DecisionSnapshot.objects.exists()


@pytest.mark.parametrize("value", ["..", ""])
@pytest.mark.parametrize("name", ["field", "subject"])
def test_a_malformed_claim_identifier_is_400(estate, agent, now, name, value):
    bad = claim("collect", written_at=now)
    bad[name] = value
    response = agent.post("/api/v1/reconcile", reconcile_body(claims=[bad]))
    problem(response, 400, "invalid_identifier")


@pytest.mark.parametrize(
    ("key", "value"),
    [("source", "../etc"), ("field", "a b"), ("subject", ".."), ("source", ""), ("subject", "")],
)
def test_a_malformed_evidence_identifier_is_400(estate, operator, key, value):
    body = {
        "kind": "observation",
        "subject": ACCOUNT,
        "field": "collections_status",
        "value": "hold",
        "source": "case-ledger",
        "observed_at": "2026-11-01T00:00:00Z",
        key: value,
    }
    problem(operator.post("/api/v1/evidence", body), 400, "invalid_identifier")
    assert not EvidenceEntry.objects.exists()


@pytest.mark.parametrize("key", ["a b", "..", "x/y", "k" * 201])
def test_a_malformed_idempotency_key_is_400(estate, agent, now, key):
    seed_collectible(now)
    snapshot = agent.post("/api/v1/reconcile", reconcile_body()).json()
    response = agent.post(
        "/api/v1/effects",
        {
            "snapshot_id": snapshot["snapshot_id"],
            "action": "release_collections_hold",
            "resulting_value": "released",
        },
        HTTP_IDEMPOTENCY_KEY=key,
        HTTP_IF_MATCH='"7"',
    )
    problem(response, 400, "invalid_identifier")
    assert not Effect.objects.exists()


def test_a_malformed_fact_key_is_400(estate, agent):
    problem(agent.client.get("/api/v1/facts/a%20b/current"), 400, "invalid_identifier")


@pytest.mark.parametrize("target", ["..", ""])
def test_a_malformed_quarantine_target_is_400(estate, operator, target):
    response = operator.post(
        "/api/v1/quarantines", {"scope": "source", "target": target, "reason": "test"}
    )
    problem(response, 400, "invalid_identifier")
    assert not Quarantine.objects.exists()


# --- Text that justifies an action must be text ------------------------------------------------


@pytest.mark.parametrize(
    ("reason", "code"),
    [
        (0, "invalid_request"),
        (1, "invalid_request"),
        (True, "invalid_request"),
        (["why"], "invalid_request"),
        ({"why": 1}, "invalid_request"),
        # Missing, null or blank: the operation's own declared code, not a generic one.
        ("", "reason_required"),
        ("   ", "reason_required"),
        (None, "reason_required"),
    ],
)
def test_a_correction_reason_must_be_a_non_empty_string(estate, operator, reason, code):
    EvidenceFactory(evidence_id="ev-001")

    response = operator.post("/api/v1/corrections", {"evidence_id": "ev-001", "reason": reason})

    problem(response, 400, code)
    assert not Correction.objects.exists()
    assert not EvidenceEntry.objects.filter(revokes__isnull=False).exists()
    assert not AuditEvent.objects.filter(action__startswith="correction").exists()


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/v1/quarantines", {"scope": "source", "target": "case-service", "reason": 0}),
        ("/api/v1/escalations/esc_x/approve", {"rationale": False}),
        ("/api/v1/contradictions/1/resolve", {"note": 7}),
    ],
)
def test_justifications_are_never_coerced_from_other_types(estate, operator, reviewer, path, body):
    persona = reviewer if "escalations" in path else operator
    problem(persona.post(path, body), 400, "invalid_request")
    assert not Quarantine.objects.exists()


@pytest.mark.parametrize(
    ("path", "body", "code"),
    [
        ("/api/v1/quarantines", {"scope": "source", "target": "case-service"}, "reason_required"),
        (
            "/api/v1/quarantines",
            {"scope": "source", "target": "case-service", "reason": " "},
            "reason_required",
        ),
        ("/api/v1/escalations/esc_x/approve", {"rationale": ""}, "rationale_required"),
        ("/api/v1/contradictions/1/resolve", {"note": None}, "note_required"),
        ("/api/v1/effects/u-1/resolve", {"outcome": "not_executed"}, "reason_required"),
    ],
)
def test_a_missing_justification_is_refused_with_the_operations_own_code(
    estate, operator, reviewer, path, body, code
):
    """Each operation declares `<field>_required`; the serializer refused first, with the
    generic `invalid_request`, whatever was missing."""
    persona = reviewer if "escalations" in path else operator
    problem(persona.post(path, body), 400, code)
    assert not Quarantine.objects.exists()


# --- Times from query strings reach the database in UTC, or are refused -----------------------


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/snapshots?issued_after=0808-10-11T11:51:23%2B18:13",
        "/api/v1/evidence?recorded_before=2026-01-01T00:00:00%2B23:59",
        "/api/v1/audit?since=2026-01-01T00:00:00-23:00",
        "/api/v1/lineage/blast-radius?memory_class=episodic&as_of=2026-01-01T00:00:00%2B18:00",
    ],
)
def test_an_offset_postgresql_cannot_store_is_normalised(estate, auditor, path):
    EvidenceFactory(evidence_id="ev-1")
    response = auditor.client.get(path)
    assert response.status_code == 200, response.content


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/snapshots?issued_after=0001-01-01T00:00:00%2B18:00",
        "/api/v1/lineage/evidence:ev-1/descendants?as_of=0001-01-01T00:00:00%2B01:00",
        "/api/v1/snapshots?issued_after=yesterday",
    ],
)
def test_a_time_out_of_range_is_a_clear_400(estate, auditor, path):
    EvidenceFactory(evidence_id="ev-1")
    response = auditor.client.get(path)
    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/problem+json"


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/effects/a%00b",
        "/api/v1/lineage/evidence:a%00b/descendants",
        "/api/v1/lineage/blast-radius?memory_class=a%00b",
        "/api/v1/lineage/blast-radius?node=evidence:a%00b",
        "/api/v1/snapshots?subject=%00",
    ],
)
def test_a_nul_in_a_path_or_query_is_a_400_on_every_database(estate, operator, url):
    # PostgreSQL cannot compare a string holding NUL: these were 500s there (the fuzzer).
    problem(operator.client.get(url), 400, "invalid_request")
