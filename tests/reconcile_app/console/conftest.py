"""Console fixtures: snapshots, escalations, facts and effects made through the real protocol,
and signed-in browsers."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from reconcile_app.models import DecisionSnapshot, Effect, Escalation
from reconcile_app.reconciliation.types import Claim
from reconcile_app.services.evidence import evidence_append
from reconcile_app.services.reconcile import ReconcileRequest, snapshot_issue
from sandbox_app.services import sandbox_fault_add, sandbox_record_write
from tests.conftest import COLLECTIONS, Persona, make_person
from tests.reconcile_app.facts.conftest import registry  # noqa: F401 (a fixture)

# What the fixtures themselves audit: making people and agents, and loading the estate's
# contracts (each version's load and activation). A test that checks a refused request
# changed nothing looks past these.
SETUP_KINDS = ("user", "principal", "contract", "source", "memory_class")


def issue_snapshot(
    agent: Persona, *, subject: str, state: str = "hold", claimed: str | None = None
) -> DecisionSnapshot:
    """Write the owner's record and its evidence, then reconcile a remembered claim.

    A claim whose value differs from state, written after the supporting evidence, is
    contradicted: it yields a memory_vs_state contradiction row.
    """
    now = timezone.now()
    sandbox_record_write(
        source="case-service",
        subject=subject,
        field="collections_status",
        value=state,
        version=42,
        valid_from=now - timedelta(minutes=20),
    )
    evidence_append(
        kind="observation",
        subject=subject,
        field="collections_status",
        value=state,
        source="case-ledger",
        observed_at=now - timedelta(minutes=20),
    )
    claims = []
    if claimed is not None:
        claims.append(
            Claim(
                subject=subject,
                field="collections_status",
                value=claimed,
                written_at=now - timedelta(minutes=5),
                memory_class="episodic",
                note="Account remains collectible.",
            )
        )
    return snapshot_issue(
        principal=agent.principal,
        request=ReconcileRequest(
            subject=subject,
            purpose="collections",
            decision_class=COLLECTIONS,
            proposed_action="release_collections_hold",
            claims=claims,
        ),
    )


@pytest.fixture
def make_snapshot(estate: Any, agent: Persona) -> Callable[..., DecisionSnapshot]:
    def make(subject: str = "account-17", **kwargs: Any) -> DecisionSnapshot:
        return issue_snapshot(agent, subject=subject, **kwargs)

    return make


def signed_in(persona: Persona, **client_kwargs: Any) -> Client:
    client = Client(**client_kwargs)
    client.force_login(persona.user)
    return client


@pytest.fixture
def operator_browser(operator: Persona) -> Client:
    return signed_in(operator)


@pytest.fixture
def auditor_browser(auditor: Persona) -> Client:
    return signed_in(auditor)


@pytest.fixture
def reviewer_browser(reviewer: Persona) -> Client:
    return signed_in(reviewer)


# --- Escalations, facts and effects, made through the real protocol -------------------------

BASELINE = "baseline.math-eval"
OWN_KEY = "baseline.code-eval"


def ambiguous_fact(agent: Persona, raiser: Persona, fact_key: str = BASELINE) -> Escalation:
    """Two current records at the owner's revision r18; `raiser` asks → authority_ambiguous.

    The first record (r17) is superseded by the second, so the history has a supersedes link.
    """
    from tests.reconcile_app.facts.conftest import authority, current, remember

    stem = fact_key.split(".")[-1]
    authority(fact_key)
    remember(agent, fact_key, f"{stem}-v17", "ckpt-0412", "registry@r17")
    remember(
        agent,
        fact_key,
        f"{stem}-v18",
        "ckpt-0519",
        "registry@r18",
        valid_until="2026-12-31",
        supersedes=f"{stem}-v17",
    )
    remember(agent, fact_key, f"{stem}-v18b", "ckpt-0520", "registry@r18", valid_until="2026-12-31")
    response = current(raiser, fact_key)
    assert response.status_code == 409, response.content
    if raiser.principal.kind == "agent":
        return Escalation.objects.get(escalation_id=response.json()["escalation_id"])
    # A person's read opens nothing: a question a person raised came another way (or before
    # that rule), and stays theirs not to decide.
    from reconcile_app.services.escalations import escalation_open_for_fact

    body = response.json()
    return escalation_open_for_fact(
        code=body["code"],
        fact_key=fact_key,
        candidate_refs=body["candidates"],
        authority_owner="eval-registry",
        requested_by=raiser.principal,
    )


@pytest.fixture
def escalation(registry: Any, agent: Persona) -> Escalation:
    """Raised by the agent: any reviewer may decide it."""
    return ambiguous_fact(agent, agent)


@pytest.fixture
def own_escalation(registry: Any, agent: Persona, reviewer: Persona) -> Escalation:
    """Raised by the reviewer persona (through their personal API token): not theirs to decide."""
    return ambiguous_fact(agent, reviewer, OWN_KEY)


@pytest.fixture
def second_reviewer(db: Any) -> Persona:
    return make_person("rosa-reviewer", "reviewer")


def collectible_account(subject: str) -> None:
    """A collectible account at version 42 with no complaint: the contract allows release."""
    now = timezone.now()
    sandbox_record_write(
        source="case-service",
        subject=subject,
        field="collections_status",
        value="collect",
        version=42,
        valid_from=now - timedelta(minutes=20),
    )
    sandbox_record_write(
        source="complaints-service",
        subject=subject,
        field="complaint_status",
        value="none",
        valid_from=now - timedelta(days=2),
    )
    evidence_append(
        kind="observation",
        subject=subject,
        field="collections_status",
        value="collect",
        source="case-ledger",
        observed_at=now - timedelta(minutes=20),
    )


def commit_effect(
    agent: Persona, key: str, *, fault: str | None = None, changed_meanwhile: bool = False
) -> Effect:
    """Reconcile an account of its own and commit a release through the API.

    `fault` makes the owner misbehave once; `changed_meanwhile` moves the owner's record on
    between decision and commit, so the owner refuses the stale If-Match (→ rejected). Inside a test transaction nothing runs on commit, so an
    accepted effect stays accepted (its readback queued, not run) until `read_back` plays
    the worker.
    """
    subject = f"account-{key}"
    collectible_account(subject)
    decided = agent.post(
        "/api/v1/reconcile",
        {
            "subject": subject,
            "purpose": "collections",
            "decision_class": COLLECTIONS,
            "proposed_action": "release_collections_hold",
        },
    )
    assert decided.status_code == 201, decided.content
    snapshot = decided.json()
    if fault is not None:
        sandbox_fault_add(source="case-service", kind=fault, count=1)
    read_version = snapshot["fields"]["collections_status"]["version"]
    if changed_meanwhile:
        sandbox_record_write(
            source="case-service",
            subject=subject,
            field="collections_status",
            value="hold",
            version=read_version + 1,
        )
    response = agent.post(
        "/api/v1/effects",
        {
            "snapshot_id": snapshot["snapshot_id"],
            "action": "release_collections_hold",
            "resulting_value": "released",
        },
        HTTP_IDEMPOTENCY_KEY=key,
        HTTP_IF_MATCH=f'"{read_version}"',
    )
    assert response.status_code in (201, 202, 412), response.content
    return Effect.objects.get(idempotency_key=key)


def read_back(effect: Effect) -> Effect:
    """What the worker's readback task does: verified, or postcondition_failed."""
    from reconcile_app.services.effects import effect_readback

    return effect_readback(effect_id=effect.pk)


@pytest.fixture
def unknown_effect(estate: Any, agent: Persona) -> Effect:
    """Sent; the owner committed it and the answer was lost: the outcome is unknown."""
    effect = commit_effect(agent, "u-1", fault="timeout_after_commit")
    assert effect.status == "unknown"
    return effect
