"""One table: every API endpoint and every persona → the status it must get.

Personas: an agent with the capability, an agent without it, operator, reviewer, auditor,
anonymous. Statuses that mean "allowed" are the endpoint's success (or a clean 4xx about the
payload, never 401/403); "refused" is 401 for anonymous and 403 for a role that may not.
"""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_app.services.evidence import evidence_append
from reconcile_app.services.sandbox import sandbox_record_write
from tests.conftest import COLLECTIONS, ago, make_agent

OK, NO, ANON = "ok", "forbidden", "unauthenticated"
PERSONAS = ("capable", "incapable", "operator", "reviewer", "auditor", "anonymous")

RECONCILE_BODY = {
    "subject": "acct-m",
    "purpose": "collections",
    "decision_class": COLLECTIONS,
    "proposed_action": "release_collections_hold",
}

# (method, path, body, expectations per persona in PERSONAS order)
MATRIX: list[tuple[str, str, Any, tuple[str, ...]]] = [
    ("post", "/api/v1/reconcile", RECONCILE_BODY, (OK, NO, NO, NO, NO, ANON)),
    ("get", "/api/v1/snapshots", None, (OK, OK, OK, OK, OK, ANON)),
    ("get", "/api/v1/evidence", None, (OK, OK, OK, OK, OK, ANON)),
    (
        "post",
        "/api/v1/evidence",
        {
            "kind": "observation",
            "subject": "acct-m",
            "field": "collections_status",
            "value": "x",
            "source": "desk",
            "observed_at": "2026-11-01T00:00:00Z",
        },
        (OK, OK, OK, NO, NO, ANON),
    ),
    ("get", "/api/v1/memories", None, (OK, OK, OK, OK, OK, ANON)),
    (
        "post",
        "/api/v1/memories",
        {
            "memory_class": "episodic",
            "subject": "acct-m",
            "purpose": "collections",
            "field": "collections_status",
            "value": "x",
            "derived_from": ["ev-m"],
        },
        (OK, OK, OK, NO, NO, ANON),
    ),
    ("get", "/api/v1/contradictions", None, (NO, NO, OK, OK, OK, ANON)),
    ("get", "/api/v1/escalations", None, (OK, OK, OK, OK, OK, ANON)),
    ("get", "/api/v1/effects", None, (OK, OK, OK, OK, OK, ANON)),
    (
        "post",
        "/api/v1/quarantines",
        {"scope": "memory_class", "target": "episodic", "reason": "matrix"},
        (NO, NO, OK, NO, NO, ANON),
    ),
    ("get", "/api/v1/quarantines", None, (NO, NO, OK, OK, OK, ANON)),
    ("get", "/api/v1/audit", None, (NO, NO, OK, OK, OK, ANON)),
    (
        "post",
        "/api/v1/corrections",
        {"evidence_id": "ev-m", "reason": "matrix"},
        (NO, NO, OK, NO, NO, ANON),
    ),
    ("get", "/api/v1/lineage/evidence:ev-m/descendants", None, (OK, OK, OK, OK, OK, ANON)),
    (
        "put",
        "/api/v1/sandbox/case-service/records/acct-m/collections_status",
        {"value": "y"},
        (NO, NO, OK, NO, NO, ANON),
    ),
    (
        "get",
        "/api/v1/sandbox/case-service/records/acct-m/collections_status",
        None,
        (OK, OK, OK, OK, OK, ANON),
    ),
    (
        "post",
        "/api/v1/sandbox/case-service/faults",
        {"kind": "lag", "seconds": 1, "count": 1},
        (NO, NO, OK, NO, NO, ANON),
    ),
]


@pytest.fixture
def personas(estate, operator, reviewer, auditor):
    sandbox_record_write(
        source="case-service",
        subject="acct-m",
        field="collections_status",
        value="collect",
        valid_from=ago(hours=1),
    )
    evidence_append(
        kind="observation",
        subject="acct-m",
        field="collections_status",
        value="collect",
        source="case-ledger",
        observed_at=ago(hours=1),
        evidence_id="ev-m",
    )
    capable = make_agent("capable", [f"{COLLECTIONS}:release_collections_hold"])
    incapable = make_agent("incapable", [])
    from rest_framework.test import APIClient

    return {
        "capable": capable.client,
        "incapable": incapable.client,
        "operator": operator.client,
        "reviewer": reviewer.client,
        "auditor": auditor.client,
        "anonymous": APIClient(),
    }


def outcome(status: int) -> str:
    if status == 401:
        return ANON
    if status == 403:
        return NO
    assert status < 500, status
    return OK


@pytest.mark.parametrize(
    ("method", "path", "body", "expected"),
    MATRIX,
    ids=[f"{m.upper()} {p}" for m, p, _, _ in MATRIX],
)
def test_authorization_matrix(personas, method, path, body, expected):
    got = {}
    for persona in PERSONAS:
        client = personas[persona]
        call = getattr(client, method)
        response = call(path, body, format="json") if body is not None else call(path)
        got[persona] = outcome(response.status_code)
    assert got == dict(zip(PERSONAS, expected, strict=True))
