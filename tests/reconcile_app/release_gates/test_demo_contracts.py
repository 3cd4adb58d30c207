"""Every demo contract passes every gate that applies to it, at either level, as a draft too,
and a run leaves nothing behind: no row, no on_commit hook, no owner read."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reconcile_app.choices import ContractStatus
from reconcile_app.demo.estate_loader import demo_estate_load
from reconcile_app.models import Contract, DecisionSnapshot
from reconcile_app.services import owner_reads, replay
from reconcile_app.services.release_gates import (
    GATE_NAMES,
    REQUIRED_AT_NARRATIVE_OK,
    release_gates_run,
)
from tests.reconcile_app.release_gates.conftest import demo_contract, row_counts, statuses

DEMO = ("collections-contact-release", "collections-letter", "dispatch-card", "warehouse-pick")
WITH_REDUCER = {"collections-letter"}


@pytest.mark.parametrize("decision_class", DEMO)
def test_every_demo_contract_passes_every_gate_that_applies(estate: None, decision_class: str):
    results = release_gates_run(demo_contract(decision_class), level="reconstruct")

    assert [result.name for result in results] == list(GATE_NAMES)
    expected = {name: "passed" for name in GATE_NAMES}
    if decision_class not in WITH_REDUCER:
        expected["invariance"] = "not_required"
    assert statuses(results) == expected, [r.detail for r in results if r.status == "failed"]
    for result in results:
        if result.status == "passed":
            assert result.checks > 0 and result.detail, result
    assert json.loads(json.dumps([result.as_dict() for result in results]))[0] == {
        "name": "replay",
        "status": "passed",
        "detail": results[0].detail,
        "duration_ms": results[0].duration_ms,
        "checks": results[0].checks,
    }


def test_a_contract_without_reducer_needs_no_invariance(estate: None):
    result = release_gates_run(demo_contract("warehouse-pick"), level="reconstruct")[5]

    assert (result.name, result.status, result.checks) == ("invariance", "not_required", 0)
    assert "no reducer" in result.detail


def test_narrative_ok_runs_only_the_four_gates_it_requires(estate: None):
    results = release_gates_run(demo_contract("collections-letter"), level="narrative_ok")

    assert statuses(results) == {
        name: "passed" if name in REQUIRED_AT_NARRATIVE_OK else "not_required"
        for name in GATE_NAMES
    }
    for result in results:
        if result.status == "not_required":
            assert "obligation assessment" in result.detail
            assert "narrative_ok" in result.detail
            assert result.checks == 0


def test_an_unknown_level_is_a_programming_error(estate: None):
    with pytest.raises(ValueError, match="level must be one of"):
        release_gates_run(demo_contract("warehouse-pick"), level="relaxed")


def test_a_draft_version_is_gated_like_any_other(estate: None):
    contract = demo_contract("dispatch-card")
    Contract.objects.filter(pk=contract.pk).update(status=ContractStatus.DRAFT)
    contract.refresh_from_db()

    results = release_gates_run(contract, level="reconstruct")

    assert set(statuses(results).values()) == {"passed", "not_required"}


class OwnerAsked(BaseException):
    """Not an Exception: the owner reads turn those into `unavailable` fields."""


def _no_owner(*args: Any, **kwargs: Any) -> Any:
    raise OwnerAsked("a release gate asked an owner system")


def test_gates_read_no_owner_and_leave_nothing_behind(
    db: None, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
):
    # The demo estate with its first batch of live snapshots, event-sourced ones included.
    demo_estate_load()
    monkeypatch.setattr(replay, "folded_reads", _no_owner)
    monkeypatch.setattr(owner_reads, "adapter_for", _no_owner)
    monkeypatch.setattr(owner_reads, "read_fields", _no_owner)
    before = row_counts()

    with django_capture_on_commit_callbacks() as callbacks:
        runs = {
            contract.decision_class: release_gates_run(contract, level="reconstruct")
            for contract in Contract.objects.all()
        }

    assert row_counts() == before
    assert callbacks == []
    for decision_class, results in runs.items():
        assert "failed" not in statuses(results).values(), (decision_class, results)
    for decision_class, results in runs.items():
        # Every live snapshot of the class was replayed, event-sourced ones too.
        recent = DecisionSnapshot.objects.filter(decision_class=decision_class).count()
        assert recent > 0
        assert f"the class's {recent} most recent live snapshots" in results[0].detail
