"""Gate `policy_evaluates` converts each state it tries once, for every rule, as a decision
does: converting the fields again for each rule made the gate cubic in the contract's size
(a 200-field, 400-rule contract's gates ran past Celery's time limit)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from reconcile_app import policy
from reconcile_app.models import Contract
from reconcile_app.services import release_gates
from reconcile_app.services.release_gates import policy_evaluates
from reconcile_app.services.release_gates.world import Finding, World
from tests.reconcile_app.release_gates.conftest import gate

RULES = 12


def wide_contract() -> str:
    names = [f"f{index}" for index in range(4)]
    rules = "\n".join(
        f"    - {{when: 'fields.{names[index % 4]} == \"bad{index}\"', code: bad_{index}}}"
        for index in range(RULES)
    )
    required = "\n".join(
        f"  - {{field: {name}, source: wide-service, max_age_seconds: 300}}" for name in names
    )
    return f"""
decision_class: wide
version: "1"
purpose: collections
required:
{required}
actions:
  act: {{field: f0}}
policy:
  version: "p1"
  deny:
{rules}
  allow: [{{when: 'true', permits: [act]}}]
contradictions: escalate
"""


def test_each_state_is_converted_once_for_every_rule(
    contract_from: Callable[[str], Contract], monkeypatch: pytest.MonkeyPatch
):
    from tests.reconcile_app.release_gates import conftest

    monkeypatch.setitem(
        conftest.SOURCES,
        "wide-service.yaml",
        """
        source: wide-service
        owner: wide-team
        adapter: sandbox
        consistency: linearizable
        fact_classes: [f0, f1, f2, f3]
        """,
    )
    contract = contract_from(wide_contract())
    conversions = []
    plain = policy._plain

    def counted(fields: dict[str, Any], effect: dict[str, Any] | None) -> dict[str, Any]:
        conversions.append(1)
        return plain(fields, effect)

    monkeypatch.setattr(policy, "_plain", counted)
    during: list[int] = []

    def measured(world: World) -> Finding:
        before = len(conversions)
        finding = policy_evaluates.policy_evaluates(world)
        during.append(len(conversions) - before)
        return finding

    monkeypatch.setitem(release_gates._GATES, "policy_evaluates", measured)

    result = gate(contract, "policy_evaluates")

    assert result.status == "passed", result.detail
    cases = result.checks // (RULES + 1)  # each case evaluates every rule, the allow too
    assert during == [cases]
