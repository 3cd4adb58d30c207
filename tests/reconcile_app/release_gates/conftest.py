"""Fixtures for the release gates: contracts written as YAML, gates run by name, and the
rows a scratch estate must never leave behind."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from lineage_app.models import Edge, Node
from reconcile_app.models import (
    AuditEvent,
    Contract,
    Correction,
    DecisionReceipt,
    DecisionSnapshot,
    Escalation,
    EvidenceEntry,
    Principal,
    SnapshotTaint,
    StateRead,
)
from reconcile_app.services.release_gates import GateResult, release_gates_run
from tests.factories import load_yaml

# Sources the test contracts read, besides the demo estate's.
SOURCES = {
    "ledger-service.yaml": """
        source: ledger-service
        owner: ledger-team
        adapter: sandbox
        consistency: linearizable
        fact_classes: [account_status, complaint_state, balance, vulnerable, note]
    """,
}

SCRATCH_MODELS = (
    DecisionSnapshot,
    StateRead,
    DecisionReceipt,
    Escalation,
    EvidenceEntry,
    Correction,
    SnapshotTaint,
    AuditEvent,
    Principal,
    User,
    Node,
    Edge,
)


def row_counts() -> dict[str, int]:
    """Rows of everything a scratch estate writes."""
    return {model.__name__: model.objects.count() for model in SCRATCH_MODELS}


@pytest.fixture
def contract_from(estate: None, tmp_path: Path) -> Callable[[str], Contract]:
    """Load one contract document (YAML text), with the test sources, and return it."""

    def load(text: str) -> Contract:
        report = load_yaml(tmp_path, {**SOURCES, "contract.yaml": text})
        (label,) = report.contracts_created
        decision_class, _, version = label.partition("@")
        return Contract.objects.get(decision_class=decision_class, version=version)

    return load


def demo_contract(decision_class: str) -> Contract:
    return Contract.objects.get(decision_class=decision_class)


def gate(contract: Contract, name: str, level: str = "reconstruct") -> GateResult:
    """The named gate's result from a full run."""
    return next(r for r in release_gates_run(contract, level=level) if r.name == name)


def statuses(results: list[GateResult]) -> dict[str, str]:
    return {result.name: result.status for result in results}


def failed(result: GateResult, *culprits: str) -> Any:
    """Assert the gate failed and its detail names every culprit."""
    assert result.status == "failed", result.detail
    for culprit in culprits:
        assert culprit in result.detail, (culprit, result.detail)
    return result
