"""The authorization matrix: every endpoint, every persona, own object and another's.

Generated from the URL conf: `test_every_api_route_is_in_the_matrix` fails when an API route
(or one of its methods) has no row below, so a new endpoint cannot be left out. Routes outside
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

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone
from rest_framework.test import APIClient

from reconcile_app.models import Contradiction
from reconcile_app.services.corrections import correction_create
from reconcile_app.services.evidence import evidence_append, evidence_attest
from reconcile_app.services.memory import memory_admit
from reconcile_app.services.quarantine import quarantine_apply, quarantine_create
from sandbox_app.services import sandbox_authority_write, sandbox_record_write
from tests.conftest import COLLECTIONS, make_agent

OK, HIDDEN, PEOPLE, NO, ANON = "ok", "hidden", "people_only", "no", "anon"
PERSONAS = ("capable", "incapable", "operator", "reviewer", "auditor", "anonymous")
# Shorthands for the common rows, in PERSONAS order.
EVERYONE = (OK, OK, OK, OK, OK, ANON)
PEOPLE_READ = (PEOPLE, PEOPLE, OK, OK, OK, ANON)
OPERATORS = (PEOPLE, PEOPLE, OK, NO, NO, ANON)
REVIEWERS = (PEOPLE, PEOPLE, NO, OK, NO, ANON)
OWN_READ = (OK, HIDDEN, OK, OK, OK, ANON)
OTHERS_READ = (HIDDEN, HIDDEN, OK, OK, OK, ANON)
AGENT_WRITES = (OK, NO, OK, NO, NO, ANON)


def _ago(**kwargs: float) -> Any:
    return timezone.now() - timedelta(**kwargs)


def _side(owner: Any, tag: str) -> SimpleNamespace:
    """One principal's objects: an allowing snapshot, an escalated one, an effect, evidence
    it attested, a memory and the escalation bound to its snapshot."""
    from reconcile_app.services.effects import effect_commit
    from reconcile_app.services.reconcile import ReconcileRequest, snapshot_issue

    subject, contested = f"acct-{tag}", f"acct-{tag}-esc"
    for name, state in ((subject, "collect"), (contested, "collect")):
        sandbox_record_write(
            source="case-service",
            subject=name,
            field="collections_status",
            value=state,
            version=7,
            valid_from=_ago(hours=1),
        )
        sandbox_record_write(
            source="complaints-service",
            subject=name,
            field="complaint_status",
            value="none",
            valid_from=_ago(days=1),
        )
        evidence_append(
            kind="observation",
            subject=name,
            field="collections_status",
            value=state,
            source="case-ledger",
            observed_at=_ago(hours=1),
        )
    # A later observation that disagrees with the owner: a contradiction, hence an escalation.
    evidence_append(
        kind="observation",
        subject=contested,
        field="collections_status",
        value="hold",
        source="contact-centre",
        observed_at=_ago(minutes=5),
    )

    def issue(name: str) -> Any:
        return snapshot_issue(
            principal=owner.principal,
            request=ReconcileRequest(
                subject=name,
                purpose="collections",
                decision_class=COLLECTIONS,
                proposed_action="retain_manual_review",
            ),
        )

    allowed, escalated = issue(subject), issue(contested)
    assert allowed.result == "allow" and escalated.result == "escalate"
    effect = effect_commit(
        principal=owner.principal,
        idempotency_key=f"k-{tag}",
        if_match='"7"',
        snapshot_id=allowed.snapshot_id,
        action="retain_manual_review",
        resulting_value="manual_review",
    ).effect
    attested = evidence_attest(
        principal=owner.principal,
        kind="observation",
        subject=subject,
        field="collections_status",
        value="manual_review",
        source="case-ledger",
        observed_at=_ago(minutes=1),
    )
    memory = memory_admit(
        agent=owner.principal,
        memory_class="episodic",
        subject=subject,
        purpose="collections",
        field="collections_status",
        value="manual_review",
        derived_from=[attested.evidence_id],
    )
    return SimpleNamespace(
        subject=subject,
        snapshot_id=allowed.snapshot_id,
        effect_key=effect.idempotency_key,
        evidence_id=attested.evidence_id,
        memory_id=memory.memory_id,
        escalation_id=escalated.escalations.get().escalation_id,
    )


@dataclass
class World:
    own: SimpleNamespace
    other: SimpleNamespace
    contradiction_id: int
    correction_id: str
    quarantine_id: str

    def of(self, whose: str) -> SimpleNamespace:
        return self.own if whose == "own" else self.other


@pytest.fixture
def world(estate, agent, operator) -> World:
    rival = make_agent("rival-agent", [f"{COLLECTIONS}:retain_manual_review", "attest:case-ledger"])
    own, other = _side(agent, "own"), _side(rival, "other")
    bad = evidence_append(
        kind="observation",
        subject="acct-x",
        field="collections_status",
        value="collect",
        source="case-ledger",
        observed_at=_ago(days=2),
    )
    correction = correction_create(evidence_id=bad.evidence_id, reason="typo", actor=operator.user)
    quarantine = quarantine_create(
        scope="memory_class", target="poisoned", reason="matrix", actor=operator.user
    )
    quarantine_apply(quarantine_id=quarantine.quarantine_id)
    sandbox_authority_write(
        source="eval-registry",
        fact_key="baseline.math-eval",
        owner="eval-team",
        source_revision="r18",
    )
    memory_admit(
        agent=agent.principal,
        memory_class="operational",
        subject="math-eval",
        purpose="nightly-eval-summary",
        fact_key="baseline.math-eval",
        value="ckpt-0519",
        owner="eval-team",
        source_revision="r18",
        derived_from=[bad.evidence_id],
    )
    return World(
        own=own,
        other=other,
        contradiction_id=Contradiction.objects.filter(snapshot__subject="acct-own-esc")
        .values_list("pk", flat=True)
        .get(),
        correction_id=correction.correction_id,
        quarantine_id=quarantine.quarantine_id,
    )


Path = Callable[[World, SimpleNamespace], str]


@dataclass(frozen=True)
class Row:
    name: str  # the URL name
    method: str
    path: Path
    expect: tuple[str, ...]  # for the capable agent's own object (or no object)
    # For another principal's object; None when the endpoint names no principal's object.
    expect_other: tuple[str, ...] | None = None
    body: Callable[[World, SimpleNamespace], Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)


def fixed(path: str) -> Path:
    return lambda world, mine: path


SANDBOX = "/api/v1/sandbox/case-service"
RECONCILE = {
    "subject": "acct-own",
    "purpose": "collections",
    "decision_class": COLLECTIONS,
    "proposed_action": "retain_manual_review",
}
RATIONALE = {"rationale": "matrix"}
REASON = {"reason": "matrix"}

MATRIX: tuple[Row, ...] = (
    Row("api-me", "get", fixed("/api/v1/me"), EVERYONE),
    Row(
        "api-reconcile",
        "post",
        fixed("/api/v1/reconcile"),
        (OK, NO, NO, NO, NO, ANON),
        body=lambda w, m: RECONCILE,
    ),
    Row("api-snapshots", "get", fixed("/api/v1/snapshots"), EVERYONE),
    Row(
        "api-snapshot",
        "get",
        lambda w, m: f"/api/v1/snapshots/{m.snapshot_id}",
        OWN_READ,
        OTHERS_READ,
    ),
    Row(
        "api-snapshot-replay",
        "post",
        lambda w, m: f"/api/v1/snapshots/{m.snapshot_id}/replay",
        OWN_READ,
        OTHERS_READ,
        body=lambda w, m: {"mode": "as_recorded"},
    ),
    Row("api-evidence", "get", fixed("/api/v1/evidence"), EVERYONE),
    Row(
        "api-evidence",
        "post",
        fixed("/api/v1/evidence"),
        AGENT_WRITES,
        body=lambda w, m: {
            "kind": "observation",
            "subject": "acct-own",
            "field": "collections_status",
            "value": "x",
            "source": "case-ledger",
            "observed_at": "2026-11-01T00:00:00Z",
        },
    ),
    Row(
        "api-evidence-detail",
        "get",
        lambda w, m: f"/api/v1/evidence/{m.evidence_id}",
        OWN_READ,
        OTHERS_READ,
    ),
    Row("api-memories", "get", fixed("/api/v1/memories"), EVERYONE),
    Row(
        "api-memories",
        "post",
        fixed("/api/v1/memories"),
        (OK, OK, OK, NO, NO, ANON),
        body=lambda w, m: {
            "memory_class": "episodic",
            "subject": "acct-own",
            "purpose": "collections",
            "field": "collections_status",
            "value": "x",
            "derived_from": [w.own.evidence_id],
        },
    ),
    Row("api-memory", "get", lambda w, m: f"/api/v1/memories/{m.memory_id}", OWN_READ, OTHERS_READ),
    Row("api-contradictions", "get", fixed("/api/v1/contradictions"), PEOPLE_READ),
    Row(
        "api-contradiction-resolve",
        "post",
        lambda w, m: f"/api/v1/contradictions/{w.contradiction_id}/resolve",
        OPERATORS,
        body=lambda w, m: {"note": "matrix"},
    ),
    Row(
        "api-corrections",
        "post",
        fixed("/api/v1/corrections"),
        OPERATORS,
        body=lambda w, m: {"evidence_id": w.own.evidence_id, **REASON},
    ),
    Row(
        "api-correction", "get", lambda w, m: f"/api/v1/corrections/{w.correction_id}", PEOPLE_READ
    ),
    Row("api-audit", "get", fixed("/api/v1/audit"), PEOPLE_READ),
    Row("api-quarantines", "get", fixed("/api/v1/quarantines"), PEOPLE_READ),
    Row(
        "api-quarantines",
        "post",
        fixed("/api/v1/quarantines"),
        OPERATORS,
        body=lambda w, m: {"scope": "memory_class", "target": "episodic", **REASON},
    ),
    Row(
        "api-quarantine", "get", lambda w, m: f"/api/v1/quarantines/{w.quarantine_id}", PEOPLE_READ
    ),
    Row(
        "api-quarantine-lift",
        "post",
        lambda w, m: f"/api/v1/quarantines/{w.quarantine_id}/lift",
        OPERATORS,
        body=lambda w, m: REASON,
    ),
    Row("api-effects", "get", fixed("/api/v1/effects"), EVERYONE),
    # Committing on a snapshot: only the principal it was issued to (API.md: 403
    # `decision_not_allowed` for another principal's snapshot).
    Row(
        "api-effects",
        "post",
        fixed("/api/v1/effects"),
        (OK, NO, NO, NO, NO, ANON),
        (NO, NO, NO, NO, NO, ANON),
        body=lambda w, m: {
            "snapshot_id": m.snapshot_id,
            "action": "retain_manual_review",
            "resulting_value": "manual_review",
        },
        headers={"HTTP_IDEMPOTENCY_KEY": "k-matrix", "HTTP_IF_MATCH": '"7"'},
    ),
    Row("api-effect", "get", lambda w, m: f"/api/v1/effects/{m.effect_key}", OWN_READ, OTHERS_READ),
    Row(
        "api-effect-readback",
        "post",
        lambda w, m: f"/api/v1/effects/{m.effect_key}/readback",
        OPERATORS,
        OPERATORS,
    ),
    Row(
        "api-effect-escalate",
        "post",
        lambda w, m: f"/api/v1/effects/{m.effect_key}/escalate",
        OPERATORS,
        OPERATORS,
        body=lambda w, m: REASON,
    ),
    Row(
        "api-effect-resolve",
        "post",
        lambda w, m: f"/api/v1/effects/{m.effect_key}/resolve",
        OPERATORS,
        OPERATORS,
        body=lambda w, m: {"outcome": "not_executed", **REASON},
    ),
    Row("api-fact-current", "get", fixed("/api/v1/facts/baseline.math-eval/current"), EVERYONE),
    Row("api-escalations", "get", fixed("/api/v1/escalations"), EVERYONE),
    Row(
        "api-escalation",
        "get",
        lambda w, m: f"/api/v1/escalations/{m.escalation_id}",
        OWN_READ,
        OTHERS_READ,
    ),
    Row(
        "api-escalation-approve",
        "post",
        lambda w, m: f"/api/v1/escalations/{m.escalation_id}/approve",
        REVIEWERS,
        REVIEWERS,
        body=lambda w, m: RATIONALE,
    ),
    Row(
        "api-escalation-reject",
        "post",
        lambda w, m: f"/api/v1/escalations/{m.escalation_id}/reject",
        REVIEWERS,
        REVIEWERS,
        body=lambda w, m: RATIONALE,
    ),
    Row(
        "api-sandbox-record",
        "get",
        fixed(f"{SANDBOX}/records/acct-own/collections_status"),
        OPERATORS,
    ),
    Row(
        "api-sandbox-record",
        "put",
        fixed(f"{SANDBOX}/records/acct-own/collections_status"),
        OPERATORS,
        body=lambda w, m: {"value": "PWNED"},
    ),
    Row(
        "api-sandbox-effects",
        "post",
        fixed(f"{SANDBOX}/effects"),
        OPERATORS,
        body=lambda w, m: {
            "subject": "acct-own",
            "field": "collections_status",
            "action": "x",
            "resulting_value": "PWNED",
        },
        headers={"HTTP_IDEMPOTENCY_KEY": "k-sandbox", "HTTP_IF_MATCH": '"1"'},
    ),
    Row("api-sandbox-effect", "get", lambda w, m: f"{SANDBOX}/effects/{m.effect_key}", OPERATORS),
    Row("api-sandbox-events", "get", fixed(f"{SANDBOX}/events?subject=acct-own"), OPERATORS),
    Row(
        "api-sandbox-events",
        "post",
        fixed(f"{SANDBOX}/events"),
        OPERATORS,
        body=lambda w, m: {"event_id": "e-matrix", "type": "x", "subject": "acct-own"},
    ),
    Row(
        "api-sandbox-authority",
        "get",
        fixed("/api/v1/sandbox/eval-registry/authority/baseline.math-eval"),
        OPERATORS,
    ),
    Row(
        "api-sandbox-authority",
        "put",
        fixed(f"{SANDBOX}/authority/baseline.x"),
        OPERATORS,
        body=lambda w, m: {"owner": "o", "source_revision": "r"},
    ),
    Row(
        "api-sandbox-faults",
        "post",
        fixed(f"{SANDBOX}/faults"),
        OPERATORS,
        body=lambda w, m: {"kind": "lag", "seconds": 1, "count": 1},
    ),
    Row("api-sandbox-faults", "delete", fixed(f"{SANDBOX}/faults"), OPERATORS),
    Row("api-metrics", "get", fixed("/api/v1/metrics"), PEOPLE_READ),
    Row(
        "api-blast-radius",
        "get",
        fixed("/api/v1/lineage/blast-radius?memory_class=episodic"),
        PEOPLE_READ,
    ),
    Row(
        "api-lineage-descendants",
        "get",
        lambda w, m: f"/api/v1/lineage/snapshot:{m.snapshot_id}/descendants",
        PEOPLE_READ,
        PEOPLE_READ,
    ),
    Row(
        "api-lineage-ancestors",
        "get",
        lambda w, m: f"/api/v1/lineage/snapshot:{m.snapshot_id}/ancestors",
        PEOPLE_READ,
        PEOPLE_READ,
    ),
    Row(
        "api-lineage-prov",
        "get",
        lambda w, m: f"/api/v1/lineage/snapshot:{m.snapshot_id}/prov",
        PEOPLE_READ,
        PEOPLE_READ,
    ),
    Row("api-schema", "get", fixed("/api/schema/"), (OK, OK, OK, OK, OK, OK)),
    Row("api-docs", "get", fixed("/api/docs/"), (OK, OK, OK, OK, OK, OK)),
    Row("metrics", "get", fixed("/metrics"), PEOPLE_READ),
)

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
        {(row.name, row.method) for row in MATRIX} - api_routes() - {("metrics", "get")}
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
}
OPEN_TO_ALL = {"login", "logout", "api-schema", "api-docs", "metrics"}


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
    """Sign-in, the schema and Prometheus are not console pages: they have rows above."""
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
