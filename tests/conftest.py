"""Shared fixtures: the demo estate's contracts and named personas.

Personas (healthchecks style): `agent` holds the collections capabilities, `outsider` is an
agent with no capability, `operator`, `reviewer` and `auditor` are people in those roles.
Each persona has `.client` (a DRF APIClient authenticated with its bearer key),
`.key`, `.principal` and `.user`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from rest_framework.test import APIClient

from reconcile_app.models import Principal
from reconcile_app.services.contracts import contracts_load
from reconcile_app.services.principals import principal_create, user_create
from reconcile_app.sources.owner_client import owner_client_reset

ESTATE = Path(__file__).resolve().parent.parent / "reconcile_app" / "demo" / "estate"


def pytest_configure(config: Any) -> None:
    from django.conf import settings

    # Password hashing is deliberately slow; tests create many people and don't test PBKDF2.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # A private in-memory cache: rate-limit counters must not leak between tests or runs.
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    # Every problem any test meets must be one the committed schema declares for that
    # operation (tests/openapi_conformance.py).
    settings.MIDDLEWARE = ["tests.openapi_conformance.DeclaredProblems", *settings.MIDDLEWARE]
    _allow_test_flush_of_append_only_tables()


def _allow_test_flush_of_append_only_tables() -> None:
    """Transactional tests end with a TRUNCATE of every table; PostgreSQL's append-only
    triggers refuse TRUNCATE unless the session opts in, which only this flush does."""
    from django.db.backends.postgresql.operations import DatabaseOperations

    original = DatabaseOperations.sql_flush

    def sql_flush(self: Any, style: Any, tables: Any, **kwargs: Any) -> list[str]:
        statements = original(self, style, tables, **kwargs)
        return ["SET LOCAL reconcile.allow_truncate = 'on'", *statements] if statements else []

    DatabaseOperations.sql_flush = sql_flush  # type: ignore[method-assign]


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: Any, django_db_blocker: Any) -> Iterator[None]:
    """The test databases, and at the session's end a check that no test left a session open.

    PostgreSQL cannot drop a database that is in use, and pytest-django says so only in a
    warning naming whichever test ran last; here the run fails and names the sessions."""
    yield
    with django_db_blocker.unblock():
        left = sessions_left_open(grace_seconds=5.0)
    if left:
        listed = "\n".join(
            f"  pid {pid}, {state}, last query: {query}" for pid, state, query in left
        )
        pytest.fail(f"tests left {len(left)} database session(s) open:\n{listed}", pytrace=False)


def sessions_left_open(
    grace_seconds: float, ignoring: Collection[int] = ()
) -> list[tuple[int, str, str]]:
    """Other sessions on this PostgreSQL test database (but those `ignoring` names), after
    waiting for ones still closing: a live server's request thread closes its connection
    just after answering."""
    from django.db import connection

    from drills_app.bench.cpu import other_sessions

    if connection.vendor != "postgresql":
        return []
    deadline = time.monotonic() + grace_seconds
    while True:
        left = [session for session in other_sessions() if session[0] not in ignoring]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


COLLECTIONS = "collections-contact-release"


@dataclass
class Persona:
    name: str
    key: str
    user: User
    principal: Principal
    client: APIClient

    def post(self, path: str, body: Any, **headers: Any) -> Any:
        return self.client.post(path, json.dumps(body), content_type="application/json", **headers)

    def get(self, path: str, **params: Any) -> Any:
        return self.client.get(path, params)


def _client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


def make_agent(name: str, capabilities: list[str]) -> Persona:
    principal, key = principal_create(name=name, capabilities=capabilities)
    return Persona(name, key, principal.user, principal, _client(key))


def make_person(
    name: str, role: str | list[str], password: str | None = "correct-horse-battery"
) -> Persona:
    roles = [role] if isinstance(role, str) else role
    user, token = user_create(username=name, roles=roles, password=password)
    return Persona(name, token, user, user.principal, _client(token))


@pytest.fixture(autouse=True)
def _fresh_cache() -> Any:
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def _readiness_log_fresh() -> Any:
    """Each test's first unready probe is logged: the readiness log keeps what the last probe
    found in the process, and a test's probe repeating another test's state would be silent."""
    from config.health import readiness_log

    readiness_log.reset()
    yield
    readiness_log.reset()


@pytest.fixture(autouse=True)
def _owner_connections_closed() -> Any:
    """Each test's owner calls start on no kept connection and leave none open: a kept one
    would reach into the next test's owner, and keep a live server's thread (and its
    database session) waiting on it."""
    yield
    owner_client_reset()


MEMORY_CLASSES = ESTATE / "memory-classes"


@pytest.fixture(autouse=True)
def _memory_classes(request: Any) -> None:
    """Every test with a database has the demo's memory classes declared, as a real estate
    would: memories of undeclared classes are refused (docs/api.md, memory_class_unknown)."""
    marker = request.node.get_closest_marker("django_db")
    transactional = "transactional_db" in request.fixturenames or (
        marker is not None and marker.kwargs.get("transaction", False)
    )
    if transactional:
        request.getfixturevalue("transactional_db")
    elif marker is not None or "db" in request.fixturenames:
        request.getfixturevalue("db")
    else:
        return
    contracts_load(paths=[str(MEMORY_CLASSES)])


@pytest.fixture
def estate(db: Any) -> None:
    """The demo estate's sources and contracts (no records: tests write what they need)."""
    contracts_load(paths=[str(ESTATE)])


@pytest.fixture
def agent(db: Any) -> Persona:
    return make_agent(
        "collections-agent",
        [
            f"{COLLECTIONS}:release_collections_hold",
            f"{COLLECTIONS}:retain_manual_review",
            "warehouse-pick:pick_pallet",
            "dispatch-card:dispatch_card",
            # It vouches for the case ledger's observations and keeps the facts it relies on:
            # eval baselines, cluster quotas, account facts (docs/api.md: attest:, fact:).
            "attest:case-ledger",
            "fact:baseline.*",
            "fact:quota.*",
            "fact:collections.*",
        ],
    )


@pytest.fixture
def outsider(db: Any) -> Persona:
    return make_agent("outsider-agent", [])


@pytest.fixture
def operator(db: Any) -> Persona:
    return make_person("olivia-operator", "operator")


@pytest.fixture
def reviewer(db: Any) -> Persona:
    return make_person("rhys-reviewer", "reviewer")


@pytest.fixture
def auditor(db: Any) -> Persona:
    return make_person("ada-auditor", "auditor")


@pytest.fixture
def now() -> datetime:
    return timezone.now()


def ago(**kwargs: float) -> datetime:
    return timezone.now() - timedelta(**kwargs)


@pytest.fixture
def eager_tasks() -> Any:
    """Run Celery tasks in-process for logic tests (the real broker is tested separately)."""
    from config.celery import app

    previous = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager, app.conf.task_eager_propagates = True, True
    yield app
    app.conf.task_always_eager, app.conf.task_eager_propagates = previous
