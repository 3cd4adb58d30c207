"""Gates `fail_closed`, `claims_cannot_authorise` and `contradiction_handling`: each fails,
naming the case, when the engine regresses the way it guards against."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from reconcile_app.choices import ReadStatus, Verdict
from reconcile_app.reconciliation import engine
from reconcile_app.reconciliation.types import ContractSpec, FieldRead
from tests.reconcile_app.release_gates.conftest import demo_contract, failed, gate

# --- fail_closed -------------------------------------------------------------------------


def test_a_stale_required_field_that_is_not_refused_fails_the_gate(
    estate: None, monkeypatch: pytest.MonkeyPatch
):
    # The regression: the freshness check lost, so an old read passes for a current one.
    monkeypatch.setattr(engine, "apply_freshness", lambda read, max_age, now: read)

    result = gate(demo_contract("warehouse-pick"), "fail_closed")

    failed(result, "pallet_bay stale (observed 120s ago, limit 60s)", "expected refuse")


def test_a_timed_out_required_field_treated_as_optional_fails_the_gate(
    estate: None, monkeypatch: pytest.MonkeyPatch
):
    # The regression: a timeout degrades the snapshot instead of failing it closed.
    original = engine.decide

    def decide(contract: ContractSpec, binding: Any, reads: dict[str, FieldRead], *rest: Any):
        lenient = replace(
            contract,
            fields=tuple(
                replace(field, required=False)
                if reads[field.name].status == ReadStatus.TIMEOUT
                else field
                for field in contract.fields
            ),
        )
        return original(lenient, binding, reads, *rest)

    monkeypatch.setattr(engine, "decide", decide)

    result = gate(demo_contract("collections-contact-release"), "fail_closed")

    failed(
        result,
        "With collections_status timeout and the other fields ok",
        "expected refuse permitting nothing",
    )


# --- claims_cannot_authorise -------------------------------------------------------------


def test_memory_that_overrides_state_fails_the_gate(estate: None, monkeypatch: pytest.MonkeyPatch):
    # The regression: a contradicted claim is taken as the state ("the agent knows better").
    original = engine.evaluate

    def evaluate(**kwargs: Any) -> Any:
        outcome = original(**kwargs)
        believed = {
            item["field"]: item["value"]
            for item in outcome.verdicts
            if item["verdict"] == Verdict.CONTRADICTED
        }
        if not believed:
            return outcome
        reads = [
            replace(read, value=believed[read.field]) if read.field in believed else read
            for read in kwargs["raw_reads"]
        ]
        return original(**{**kwargs, "raw_reads": reads, "claims": []})

    monkeypatch.setattr(engine, "evaluate", evaluate)

    result = gate(demo_contract("collections-contact-release"), "claims_cannot_authorise")

    failed(
        result,
        "A claim contradicting collections_status='hold' changed the decision",
        "allow (allowed) permitting ['release_collections_hold', 'retain_manual_review'] "
        "without claims, refuse (evidence_missing) with it",
    )


def test_claims_are_varied_in_an_allowed_a_denied_and_an_escalated_state(estate: None):
    result = gate(demo_contract("collections-contact-release"), "claims_cannot_authorise")

    assert result.status == "passed", result.detail
    assert "base states deciding allow, deny, escalate" in result.detail


# --- contradiction_handling --------------------------------------------------------------


def test_a_contradiction_escalated_under_refuse_fails_the_gate(
    estate: None, monkeypatch: pytest.MonkeyPatch
):
    # The regression: the engine ignores `contradictions: refuse` and always escalates.
    original = engine.decide

    def decide(contract: ContractSpec, *rest: Any) -> Any:
        return original(replace(contract, contradictions="escalate"), *rest)

    monkeypatch.setattr(engine, "decide", decide)

    result = gate(demo_contract("warehouse-pick"), "contradiction_handling")

    failed(
        result,
        "saying pallet_bay=",
        "gave escalate",
        "expected refuse (`contradictions: refuse`)",
    )


def test_a_contradiction_smoothed_over_fails_the_gate(
    estate: None, monkeypatch: pytest.MonkeyPatch
):
    # The regression: later evidence disagreeing with the owner is no longer noticed.
    monkeypatch.setattr(engine, "source_contradictions", lambda *args: [])

    result = gate(demo_contract("collections-contact-release"), "contradiction_handling")

    failed(
        result,
        "with no contradiction recorded",
        "expected escalate (`contradictions: escalate`)",
    )


def test_both_settings_are_checked_on_every_field(estate: None):
    escalating = gate(demo_contract("dispatch-card"), "contradiction_handling")
    refusing = gate(demo_contract("collections-letter"), "contradiction_handling")

    assert escalating.status == refusing.status == "passed"
    assert "on each of 2 fields gave escalate" in escalating.detail
    assert "on each of 4 fields gave refuse" in refusing.detail
