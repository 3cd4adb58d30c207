"""The authorization matrix: every endpoint, every persona, own object and another's.

Generated from the URL conf: `test_every_api_route_is_in_the_matrix` fails when an API route
(or one of its methods) has no row in tests/authorization/matrix.py, so a new endpoint cannot
be left out (the objects the rows ask about: tests/authorization/world.py). Routes outside
/api/ (the console, sign-in, the schema, Prometheus) are checked generically for the callers
who must be turned away: an anonymous visitor and an agent's user (the console's people
are covered page by page in tests/reconcile_app/console/test_roles.py).

Personas: `capable` (an agent holding the collections capabilities, attest:case-ledger and
fact:baseline.*), `incapable` (an agent with none), `operator`, `reviewer`, `auditor`,
`anonymous`. "Own" objects belong to `capable`; "other" objects to `rival`, another agent
with the same capabilities. Outcomes:

- OK: the request reached the endpoint's own logic (2xx/3xx, or a clean 4xx about the
  payload or the object's state: 400, 409, 412, 422, 423, 428);
- HIDDEN: 404 — another principal's object is not there for an agent;
- PEOPLE: 403 `people_only` — for people in a role, not for agents;
- NO: 403 with another code (the role or the capability may not);
- ANON: 401.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from rest_framework.test import APIClient

from tests.authorization.matrix import (
    ANON,
    HIDDEN,
    MATRIX,
    NO,
    OK,
    PEOPLE,
    PERSONAS,
)
from tests.authorization.world import world  # noqa: F401 (a fixture)

CASES = [
    (row, whose)
    for row in MATRIX
    for whose in (("own", "other") if row.expect_other is not None else ("own",))
]


@pytest.fixture
def clients(world, agent, operator, reviewer, auditor, outsider) -> dict[str, APIClient]:
    return {
        "capable": agent.client,
        "incapable": outsider.client,
        "operator": operator.client,
        "reviewer": reviewer.client,
        "auditor": auditor.client,
        "anonymous": APIClient(),
    }


def outcome(response: Any) -> str:
    status = response.status_code
    assert status < 500, (status, response.content[:300])
    if status == 401:
        return ANON
    if status == 404:
        return HIDDEN
    if status == 403:
        code = response.json().get("code") if "json" in response.get("Content-Type", "") else ""
        return PEOPLE if code == "people_only" else NO
    return OK


@pytest.mark.parametrize(
    ("row", "whose"),
    CASES,
    ids=[f"{row.method.upper()} {row.name} ({whose})" for row, whose in CASES],
)
def test_authorization_matrix(world, clients, row, whose):
    mine = world.of(whose)
    expected = row.expect if whose == "own" else row.expect_other
    got = {}
    for persona in PERSONAS:
        call = getattr(clients[persona], row.method)
        path = row.path(world, mine)
        body = row.body(world, mine) if row.body else None
        headers = dict(row.headers)
        if "HTTP_IDEMPOTENCY_KEY" in headers:
            # A key of each persona's own: a reused key would be answered from its record.
            headers["HTTP_IDEMPOTENCY_KEY"] += f"-{persona}-{whose}"
        response = call(path, body, format="json", **headers) if body else call(path, **headers)
        got[persona] = outcome(response)
    assert got == dict(zip(PERSONAS, expected, strict=True))


# --- The matrix is complete -------------------------------------------------------------------


def _routes(resolver: URLResolver | None = None, prefix: str = "") -> list[tuple[str, Any]]:
    """Every (route, pattern) in the URL conf, with its full path prefix."""
    found: list[tuple[str, Any]] = []
    for entry in (resolver or get_resolver()).url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            found += _routes(entry, route)
        elif isinstance(entry, URLPattern):
            found.append((route, entry))
    return found


def _methods(pattern: URLPattern) -> set[str]:
    view = getattr(pattern.callback, "view_class", None)
    if view is None:
        return {"get"}
    return {
        method
        for method in ("get", "post", "put", "patch", "delete")
        if hasattr(view, method) and method in view.http_method_names
    }


def api_routes() -> set[tuple[str, str]]:
    return {
        (pattern.name, method)
        for route, pattern in _routes()
        if route.startswith("api/") and pattern.name
        for method in _methods(pattern)
    }


def test_every_api_route_is_in_the_matrix():
    covered = {(row.name, row.method) for row in MATRIX}
    missing = sorted(api_routes() - covered)
    assert not missing, f"API routes with no row in the authorization matrix: {missing}"


def test_every_row_names_a_real_route():
    unknown = sorted(
        {(row.name, row.method) for row in MATRIX}
        - api_routes()
        - {("metrics", "get"), ("healthz", "get"), ("readyz", "get")}
    )
    assert not unknown


# --- Everything outside /api/ turns away who must be turned away ------------------------------

DUMMY = {
    "snapshot_id": "snap_x",
    "contradiction_id": 1,
    "escalation_id": "esc_x",
    "fact_key": "baseline.x",
    "key": "k-x",
    "quarantine_id": "qua_x",
    "scope": "source",
    "target": "case-service",
    "run_id": 1,
    "object_kind": "effect",
    "object_ref": "k-x",
    "correction_id": "cor_x",
    "evidence_id": "ev-x",
    "memory_id": "mem-x",
    "decision_class": "collections-contact-release",
    "version": "7.3",
    "job_id": "job_x",
    "prefix": "0123abcd",
}
OPEN_TO_ALL = {"login", "logout", "api-schema", "api-docs", "metrics", "healthz", "readyz"}


def console_routes() -> list[tuple[str, str]]:
    paths = []
    for route, pattern in _routes():
        if route.startswith(("api/", "admin/")) or not pattern.name or pattern.name in OPEN_TO_ALL:
            continue
        kwargs = {name: DUMMY[name] for name in pattern.pattern.regex.groupindex}
        for method in sorted(_methods(pattern)):
            paths.append((method, reverse(pattern.name, kwargs=kwargs)))
    return paths


CONSOLE = console_routes()


@pytest.mark.parametrize(("method", "path"), CONSOLE, ids=[f"{m} {p}" for m, p in CONSOLE])
def test_the_console_turns_away_visitors_and_agents(db, agent, method, path):
    visitor = getattr(Client(), method)(path)
    assert visitor.status_code == 302, (path, visitor.status_code)
    assert visitor["Location"].startswith("/accounts/login/")

    signed_in_agent = Client()
    signed_in_agent.force_login(agent.user)
    refused = getattr(signed_in_agent, method)(path)
    assert refused.status_code == 403, (path, refused.status_code)


def test_the_routes_open_to_all_are_in_the_matrix():
    """Sign-in, the schema and Prometheus are not console pages: they have rows in the matrix."""
    named = {pattern.name for route, pattern in _routes() if pattern.name}
    assert named >= OPEN_TO_ALL
    in_matrix = {row.name for row in MATRIX}
    assert OPEN_TO_ALL - {"login", "logout"} <= in_matrix


def test_sign_in_and_sign_out_are_open_to_everyone(db):
    assert Client().get(reverse("login")).status_code == 200
    assert Client().post(reverse("logout")).status_code == 302


# --- Lists are scoped too ---------------------------------------------------------------------

LISTS = [
    ("/api/v1/snapshots", "snapshot_id", "snapshot_id"),
    ("/api/v1/effects", "idempotency_key", "effect_key"),
    ("/api/v1/evidence", "evidence_id", "evidence_id"),
    ("/api/v1/memories", "memory_id", "memory_id"),
    ("/api/v1/escalations", "escalation_id", "escalation_id"),
]


@pytest.mark.parametrize(("path", "key", "attribute"), LISTS, ids=[p for p, _, _ in LISTS])
def test_an_agent_lists_its_own_objects_and_people_list_everyones(
    world, clients, path, key, attribute
):
    def listed(persona: str) -> set[str]:
        response = clients[persona].get(path, {"page_size": 500})
        assert response.status_code == 200, response.content
        return {item[key] for item in response.json()["results"]}

    own, other = getattr(world.own, attribute), getattr(world.other, attribute)
    assert own in listed("capable") and other not in listed("capable")
    assert own not in listed("incapable") and other not in listed("incapable")
    assert {own, other} <= listed("auditor")
