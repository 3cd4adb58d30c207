"""Errors are problem+json with a stable code; bad input never yields a 500 or an HTML page."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from tests.factories import ACCOUNT, COLLECTIONS, claim, reconcile_body, seed_account_17

RECONCILE = "/api/v1/reconcile"
PROBLEM = "application/problem+json"


def assert_problem(response, status: int, code: str | None = None) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == PROBLEM
    body = response.json()
    assert {"type", "title", "status", "detail", "code"} <= set(body)
    assert body["status"] == status
    if code is not None:
        assert body["code"] == code
    return body


def raw_post(persona, payload: str | bytes, content_type: str = "application/json"):
    return persona.client.post(RECONCILE, payload, content_type=content_type)


def test_malformed_json_is_a_400_problem(estate, agent):
    assert_problem(raw_post(agent, '{"subject": "account-17",'), 400, "malformed_json")


def test_invalid_utf8_is_a_400_problem(estate, agent):
    assert_problem(raw_post(agent, b'{"subject": "\xff\xfe"}'), 400, "malformed_json")


def test_deeply_nested_json_is_a_400_problem_not_a_crash(estate, agent):
    response = raw_post(agent, "[" * 100_000 + "]" * 100_000)
    assert_problem(response, 400)


@pytest.mark.parametrize("depth", [101, 470, 900])
def test_a_value_nested_past_the_limit_is_a_400_problem_not_a_server_error(
    estate, operator, now, depth
):
    # It decodes (Python's decoder goes to ~1,000 levels), but at ~470 the 64 KiB check's
    # walk raised RecursionError: a 500 on evidence, claims, memories and sandbox writes.
    nested = "[" * depth + "]" * depth
    evidence = {
        "kind": "observation",
        "subject": ACCOUNT,
        "field": "collections_status",
        "value": "VALUE",
        "source": "case-service",
        "observed_at": now.isoformat(),
    }
    body = json.dumps(evidence).replace('"VALUE"', nested)

    response = operator.client.post("/api/v1/evidence", body, content_type="application/json")

    problem = assert_problem(response, 400, "malformed_json")
    assert "nested too deeply" in problem["detail"]


def test_a_value_nested_to_the_limit_is_kept(estate, operator, now):
    nested = "[" * 99 + '"collect"' + "]" * 99
    sandbox = "/api/v1/sandbox/case-service/records/acct-deep/collections_status"

    response = operator.client.put(
        sandbox, f'{{"value": {nested}}}', content_type="application/json"
    )

    assert response.status_code == 200, response.content


@pytest.mark.parametrize(
    "body",
    [
        {**reconcile_body(), "subject": ["account-17"]},
        {**reconcile_body(), "claims": "collect"},
        {**reconcile_body(), "claims": [{"subject": ACCOUNT}]},
        {
            **reconcile_body(),
            "claims": [
                {
                    "subject": ACCOUNT,
                    "field": "collections_status",
                    "value": "x",
                    "written_at": "yesterday",
                }
            ],
        },
        {"purpose": "collections", "decision_class": COLLECTIONS},
        [reconcile_body()],
        "reconcile please",
        None,
    ],
    ids=[
        "list-subject",
        "string-claims",
        "claim-missing-fields",
        "bad-time",
        "no-subject",
        "array-body",
        "string-body",
        "null-body",
    ],
)
def test_wrong_shapes_are_400_problems_with_a_code(estate, agent, body):
    problem = assert_problem(raw_post(agent, json.dumps(body)), 400)
    assert problem["code"]


def test_too_many_claims_is_refused(estate, agent, now):
    claims = [claim("hold", written_at=now)] * 1001
    assert_problem(agent.post(RECONCILE, reconcile_body(claims=claims)), 400)


def test_unsupported_media_type_is_a_problem(estate, agent):
    assert_problem(
        raw_post(agent, "subject=account-17", "application/x-www-form-urlencoded"),
        415,
        "unsupported_media_type",
    )


def test_unauthenticated_is_401_problem(estate):
    response = APIClient().post(RECONCILE, reconcile_body(), format="json")
    assert_problem(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"] == "Bearer"


@pytest.mark.parametrize("header", ["Bearer rk_00000000_nope", "Bearer not-a-key", "Bearer "])
def test_bad_bearer_key_is_401_problem(estate, header):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    assert_problem(client.get("/api/v1/snapshots"), 401)


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER"])
def test_the_scheme_name_is_case_insensitive(estate, agent, scheme):
    """RFC 9110 11.1: clients that write "bearer" were answered 401 not_authenticated."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"{scheme} {agent.key}")
    assert client.get("/api/v1/snapshots").status_code == 200


def test_revoked_key_of_a_real_principal_fails(estate, agent):
    key = agent.principal.keys.get()
    key.revoked_at = key.created_at
    key.save(update_fields=["revoked_at"])
    assert_problem(agent.client.get("/api/v1/snapshots"), 401, "authentication_failed")


@pytest.mark.parametrize("path", ["/api/v1/nope", "/api/v2/reconcile", "/api/v1/snapshots/x/y/z"])
def test_unknown_api_path_is_a_json_404(estate, agent, path):
    response = agent.client.get(path)
    assert response.status_code == 404
    assert response["Content-Type"].startswith(("application/json", PROBLEM))
    assert response.json()["code"]


def test_wrong_method_is_a_405_problem(estate, agent):
    assert_problem(agent.client.get(RECONCILE), 405, "method_not_allowed")


def test_nul_in_a_claimed_value_is_not_a_server_error(estate, agent, now):
    """PostgreSQL's jsonb cannot hold \\u0000: a claim carrying one must not become a 5xx."""
    seed_account_17(now)
    response = agent.post(
        RECONCILE,
        reconcile_body(
            claims=[
                claim("ho\u0000ld", written_at=now - timedelta(minutes=1)),
            ]
        ),
    )
    assert response.status_code in (201, 400), response.content


def test_nul_in_an_evidence_value_is_not_a_server_error(estate, agent, now):
    response = agent.post(
        "/api/v1/evidence",
        {
            "kind": "observation",
            "subject": ACCOUNT,
            "field": "collections_status",
            "value": {"note": "a\u0000b"},
            "source": "case-ledger",
            "observed_at": now.isoformat(),
        },
    )
    assert response.status_code in (201, 400), response.content


# --- Never a 500 -------------------------------------------------------------------------------

# NUL is left out here so these properties are deterministic on every database; the two
# tests above pin what a NUL must do.
TEXT = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=20
)
JSON_LEAVES = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT
JSON = st.recursive(
    JSON_LEAVES,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXT, children, max_size=4),
    max_leaves=12,
)
KEYS = ["subject", "purpose", "decision_class", "proposed_action", "contract_version", "claims"]
CLAIM_KEYS = [
    "subject",
    "field",
    "value",
    "written_at",
    "memory_class",
    "purpose",
    "derived_from",
    "note",
]
NEAR_VALID = st.fixed_dictionaries(
    {
        "subject": st.sampled_from([ACCOUNT, "", "x" * 201]) | JSON,
        "purpose": st.sampled_from(["collections", "marketing"]) | JSON,
        "decision_class": st.sampled_from([COLLECTIONS, "warehouse-pick", "nope"]),
        "proposed_action": st.sampled_from(["release_collections_hold", "", "x"]) | JSON,
        "claims": st.lists(
            st.dictionaries(st.sampled_from(CLAIM_KEYS), JSON, max_size=8)
            | st.fixed_dictionaries(
                {
                    "subject": st.just(ACCOUNT),
                    "field": st.just("collections_status"),
                    "value": JSON,
                    "written_at": st.sampled_from(
                        [
                            "2026-08-30T09:00:00Z",
                            "0001-01-01T00:00:00+05:00",
                            "9999-12-31T23:59:59-05:00",
                            "2026-02-30T00:00:00Z",
                        ]
                    ),
                }
            ),
            max_size=4,
        )
        | JSON,
    },
)
BODIES = JSON | st.dictionaries(st.sampled_from(KEYS), JSON, max_size=6) | NEAR_VALID


@settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=150, deadline=None
)
@given(body=BODIES)
def test_random_reconcile_bodies_never_cause_a_server_error(estate, agent, body):
    response = raw_post(agent, json.dumps(body))
    assert response.status_code < 500, response.content
    if response.status_code >= 400:
        assert response["Content-Type"] == PROBLEM
        assert response.json()["code"]


EVIDENCE_BODIES = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["observation", "correction", "rumour"]) | JSON,
        "subject": st.just(ACCOUNT) | JSON,
        "source": st.just("case-ledger") | JSON,
        "observed_at": st.sampled_from(
            ["2026-08-30T09:00:00Z", "2026-02-30T00:00:00Z", "9999-12-31T23:59:59-05:00"]
        )
        | JSON,
    },
    optional={
        "field": st.just("collections_status") | JSON,
        "value": JSON,
        "revokes": st.sampled_from(["ev-001", "evidence:ev-001", "ev-x"]) | JSON,
        "supersedes": st.sampled_from(["ev-001", "ev-x"]) | JSON,
        "derived_from": st.lists(st.sampled_from(["ev-001", "ev-x", "memory:m"])) | JSON,
        "evidence_id": st.sampled_from(["ev-001", "ev-new", "bad id!", ""]) | JSON,
        "note": TEXT | JSON,
    },
)


def mostly(valid: st.SearchStrategy) -> st.SearchStrategy:
    """Usually a valid value, sometimes any JSON at all."""
    return st.one_of(valid, valid, valid, JSON)


MEMORY_BODIES = st.fixed_dictionaries(
    {
        "memory_class": mostly(st.sampled_from(["episodic", "case-notes", "Not A Slug"])),
        "subject": mostly(st.just(ACCOUNT)),
        "purpose": mostly(st.just("collections")),
        "field": mostly(st.just("collections_status")),
        "value": JSON,
        "derived_from": mostly(
            st.sampled_from([["ev-001"], ["memory:m"], ["ev-001", "m"], ["ev-001"], [], ["ev-x"]])
        ),
    },
    optional={
        "fact_key": mostly(st.just("baseline.math")),
        "valid_until": mostly(st.sampled_from(["2026-12-31", "2027-01-01", "2026-02-30"])),
        "supersedes": mostly(st.sampled_from(["m", "mem-x"])),
        "written_at": mostly(
            st.sampled_from(["2026-08-30T09:00:00Z", "0001-01-01T00:00:00+05:00"])
        ),
        "memory_id": mostly(st.uuids().map(lambda u: f"m-{u.hex[:8]}") | st.just("bad id!")),
        "owner": TEXT | JSON,
    },
)


@pytest.mark.parametrize(
    ("path", "bodies"),
    [("/api/v1/evidence", EVIDENCE_BODIES | JSON), ("/api/v1/memories", MEMORY_BODIES | JSON)],
    ids=["evidence", "memories"],
)
def test_random_ledger_and_memory_bodies_never_cause_a_server_error(estate, agent, path, bodies):
    from tests.factories import EvidenceFactory, MemoryFactory

    EvidenceFactory(evidence_id="ev-001")
    MemoryFactory(agent=agent.principal, derived_from=["ev-001"], memory_id="m")

    statuses: set[int] = set()

    @settings(
        suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=100, deadline=None
    )
    @given(body=bodies)
    def check(body: object) -> None:
        response = agent.client.post(path, json.dumps(body), content_type="application/json")
        statuses.add(response.status_code)
        assert response.status_code < 500, response.content
        if response.status_code >= 400:
            assert response["Content-Type"] == PROBLEM
            assert response.json()["code"]

    check()
    # The generator reaches both the refusal paths and the write path.
    assert 201 in statuses and 400 in statuses
