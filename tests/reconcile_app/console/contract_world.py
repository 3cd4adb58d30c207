"""Contract versions for the console's Contracts pages: the demo estate, a draft of the next
collections-contact-release version, and the release gates played by the test.

The gates are another engineer's (services/release_gates); these tests rely only on their
interface — `release_gates_run(contract, level=)` returning results with a `name`, a
`status` (passed | failed | not_required) and `as_dict()` — and on docs/api.md's gate names,
so a page is tested on what it shows, whatever a gate really checks.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pytest

from reconcile_app.models import Contract, ContractActivation
from reconcile_app.services.contract_lifecycle import (
    contract_activation_request,
    contract_activation_run,
)
from reconcile_app.services.contracts import contracts_load
from tests.conftest import COLLECTIONS, ESTATE, Persona

# docs/api.md, "Contracts": the release gates, in the order they run.
GATE_NAMES = (
    "replay",
    "fail_closed",
    "claims_cannot_authorise",
    "contradiction_handling",
    "policy_evaluates",
    "invariance",
    "correction_trace",
)
ACTIVE, DRAFT = "7.3", "7.4"
# The next version: the complaint becomes required, the freshness budget tighter, the release
# may only write `released`, a contradiction refuses, and its assessment finds the authority
# contested (whether or not 7.3 was assessed, the assessments differ).
DRAFT_FILE = """\
decision_class: collections-contact-release
version: "7.4"
description: A complaint must have been read before a hold is released.
purpose: collections
obligation: {mutability: high, authority: contested, consequence: high, replay: required}
required:
  - {field: collections_status, source: case-service, max_age_seconds: 120, evidence: required}
  - {field: complaint_status, source: complaints-service, max_age_seconds: 600}
actions:
  release_collections_hold: {field: collections_status, values: [released]}
  retain_manual_review: {field: collections_status}
policy:
  version: "collections-2026-12"
  deny:     [{when: 'fields.collections_status == "hold"', code: hardship_hold}]
  escalate: [{when: 'fields.complaint_status == "open" || fields.complaint_status == "new"', code: open_complaint}]
  allow:    [{when: 'true', permits: [release_collections_hold, retain_manual_review]}]
contradictions: refuse
commit_window_seconds: 60
reducer: null
"""


@dataclass(frozen=True)
class GateOutcome:
    name: str
    status: str
    detail: str
    duration_ms: int = 4
    checks: int = 2

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Gates:
    """The release gates as the test plays them: all pass, but those named in `failing`;
    invariance is not required of a contract without a reducer."""

    failing: set[str] = field(default_factory=set)
    runs: list[str] = field(default_factory=list)

    def run(self, contract: Contract, *, level: str) -> list[GateOutcome]:
        self.runs.append(f"{contract.decision_class}@{contract.version}")
        outcomes = []
        for name in GATE_NAMES:
            if name == "invariance" and not contract.reducer:
                outcomes.append(GateOutcome(name, "not_required", "the contract has no reducer"))
            elif name in self.failing:
                outcomes.append(GateOutcome(name, "failed", f"{name}: 1 of 2 checks failed"))
            else:
                outcomes.append(GateOutcome(name, "passed", f"{name}: 2 checks passed"))
        return outcomes


@pytest.fixture
def gates(monkeypatch: Any) -> Gates:
    played = Gates()
    monkeypatch.setattr("reconcile_app.services.contract_lifecycle.release_gates_run", played.run)
    return played


def load_draft(directory: Path, text: str = DRAFT_FILE, name: str = "next.yaml") -> Contract:
    """Load a contract file as a draft (`load_contracts --draft`)."""
    path = directory / name
    path.write_text(text)
    contracts_load(paths=[str(path)], activate=False)
    return Contract.objects.latest("pk")


def version_file(version: str, *, max_age: int = 300) -> str:
    """Another version of collections-contact-release, differing only in its freshness."""
    return DRAFT_FILE.replace('version: "7.4"', f'version: "{version}"').replace(
        "max_age_seconds: 120", f"max_age_seconds: {max_age}"
    )


@dataclass(frozen=True)
class ContractWorld:
    active: Contract  # collections-contact-release 7.3, live since the estate loaded
    draft: Contract  # 7.4, loaded as a draft


@pytest.fixture
def contract_world(gates: Gates, db: Any, tmp_path: Path) -> ContractWorld:
    """The demo estate, gone live through the played gates, and a draft 7.4."""
    contracts_load(paths=[str(ESTATE)])
    draft = load_draft(tmp_path)
    return ContractWorld(
        active=Contract.objects.get(decision_class=COLLECTIONS, version=ACTIVE), draft=draft
    )


def activate(
    contract: Contract, reviewer: Persona, rationale: str = "Ready."
) -> ContractActivation:
    """A reviewer asks and the worker runs the gates (played here, as the task would)."""
    activation = contract_activation_request(
        contract=contract, actor=reviewer.user, rationale=rationale
    )
    return contract_activation_run(activation_id=activation.activation_id)


def contract_path(contract: Contract, suffix: str = "") -> str:
    return f"/contracts/{contract.decision_class}/{contract.version}/{suffix}"
