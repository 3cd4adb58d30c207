"""Console fixtures: snapshots issued through the real protocol, and signed-in browsers."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from reconcile_app.models import DecisionSnapshot
from reconcile_app.reconciliation.types import Claim
from reconcile_app.services.evidence import evidence_append
from reconcile_app.services.reconcile import ReconcileRequest, snapshot_issue
from reconcile_app.services.sandbox import sandbox_record_write
from tests.conftest import COLLECTIONS, Persona


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
