"""Gates `replay` and `correction_trace` (the scratch-estate drills): each fails, naming the
snapshot and what differs or is missing, and leaves no row behind whether it passes, fails
or raises."""

from __future__ import annotations

import time
from typing import Any

import pytest

from reconcile_app.models import DecisionSnapshot, Principal
from reconcile_app.reconciliation import engine
from reconcile_app.services import snapshots
from reconcile_app.services.reconcile import ReconcileRequest, snapshot_issue
from reconcile_app.services.release_gates import drill, release_gates_run, scratch
from reconcile_app.services.release_gates import replay as replay_gate
from tests.conftest import Persona
from tests.factories import seed_collectible
from tests.reconcile_app.release_gates.conftest import demo_contract, failed, gate, row_counts

COLLECTIONS = "collections-contact-release"


def issue(principal: Principal, subject: str) -> DecisionSnapshot:
    return snapshot_issue(
        principal=principal,
        request=ReconcileRequest(
            subject=subject,
            purpose="collections",
            decision_class=COLLECTIONS,
            proposed_action="release_collections_hold",
        ),
    )


# --- replay ------------------------------------------------------------------------------


def test_an_engine_that_does_not_rebuild_what_it_issued_fails_replay(
    estate: None, monkeypatch: pytest.MonkeyPatch
):
    # The regression: the content depends on when it is computed, so replay cannot match.
    original = engine.evaluate

    def evaluate(**kwargs: Any) -> Any:
        outcome = original(**kwargs)
        outcome.content["cutoffs"]["computed_ns"] = time.perf_counter_ns()
        return outcome

    monkeypatch.setattr(engine, "evaluate", evaluate)

    failed(
        gate(demo_contract(COLLECTIONS), "replay"),
        "A scratch snapshot issued under collections-contact-release@7.3 (deciding allow) "
        "does not replay exactly as recorded: cutoffs.computed_ns was recorded as",
    )


def test_the_class_recent_live_snapshots_are_replayed(
    estate: None, agent: Persona, now: Any, monkeypatch: pytest.MonkeyPatch
):
    for subject in ("account-1", "account-2", "account-3"):
        seed_collectible(now, subject=subject)
        issue(agent.principal, subject)

    assert (
        "the class's 3 most recent live snapshots"
        in gate(demo_contract(COLLECTIONS), "replay").detail
    )
    monkeypatch.setattr(replay_gate, "RECENT_LIVE_SNAPSHOTS", 2)
    assert (
        "the class's 2 most recent live snapshots"
        in gate(demo_contract(COLLECTIONS), "replay").detail
    )


def test_a_live_snapshot_the_engine_no_longer_rebuilds_fails_replay(
    estate: None, agent: Persona, now: Any, monkeypatch: pytest.MonkeyPatch
):
    seed_collectible(now)
    # Issued by an engine that wrote something today's engine does not.
    with monkeypatch.context() as patched:
        original = engine.evaluate

        def evaluate(**kwargs: Any) -> Any:
            outcome = original(**kwargs)
            outcome.content["engine_build"] = "2026.11"
            return outcome

        patched.setattr(engine, "evaluate", evaluate)
        old = issue(agent.principal, "account-17")

    failed(
        gate(demo_contract(COLLECTIONS), "replay"),
        f"Live snapshot {old.snapshot_id} ({COLLECTIONS}@7.3",
        "engine_build was recorded as '2026.11', replayed as '(missing)'",
    )


# --- correction_trace --------------------------------------------------------------------


def _lineage_without_evidence(monkeypatch: pytest.MonkeyPatch) -> None:
    # The regression: snapshots stop recording the evidence they used in the lineage graph.
    original = snapshots.snapshot_links

    def snapshot_links(*, snapshot_id: str, decision_id: str, content: dict[str, Any]) -> Any:
        return original(
            snapshot_id=snapshot_id,
            decision_id=decision_id,
            content={**content, "evidence_manifest": []},
        )

    monkeypatch.setattr(snapshots, "snapshot_links", snapshot_links)


def test_a_snapshot_missing_from_the_blast_radius_fails_correction_trace(
    estate: None, monkeypatch: pytest.MonkeyPatch
):
    _lineage_without_evidence(monkeypatch)

    result = gate(demo_contract("warehouse-pick"), "correction_trace")

    failed(
        result,
        "Revoking the scratch entry",
        "supporting pallet_bay",
        "its blast radius does not reach snapshot:snap_",
        "decision:dec_",
        "is not marked tainted",
    )


def test_a_failing_drill_leaves_no_row_behind(estate: None, monkeypatch: pytest.MonkeyPatch):
    _lineage_without_evidence(monkeypatch)
    before = row_counts()

    results = release_gates_run(demo_contract(COLLECTIONS), level="reconstruct")

    assert [r.status for r in results if r.name == "correction_trace"] == ["failed"]
    assert row_counts() == before


def test_a_gate_that_raises_is_failed_with_the_exception_and_rolled_back(
    estate: None, monkeypatch: pytest.MonkeyPatch
):
    def correction_create(**kwargs: Any) -> Any:
        raise RuntimeError("ledger offline")

    # It raises after the scratch principal, evidence and snapshot were written.
    monkeypatch.setattr(drill, "correction_create", correction_create)
    before = row_counts()

    results = release_gates_run(demo_contract("dispatch-card"), level="reconstruct")

    raised = next(r for r in results if r.name == "correction_trace")
    assert (raised.status, raised.detail) == (
        "failed",
        "The gate raised RuntimeError: ledger offline",
    )
    assert {r.status for r in results if r.name != "correction_trace"} <= {
        "passed",
        "not_required",
    }
    assert row_counts() == before


def test_a_drill_that_cannot_issue_fails_both_drill_gates_and_leaves_nothing(
    estate: None, monkeypatch: pytest.MonkeyPatch
):
    def snapshot_persist(**kwargs: Any) -> Any:
        raise RuntimeError("snapshot store full")

    # It raises after the scratch principal and its ledger entries were written.
    monkeypatch.setattr(scratch, "snapshot_persist", snapshot_persist)
    before = row_counts()

    results = {
        r.name: r for r in release_gates_run(demo_contract(COLLECTIONS), level="reconstruct")
    }

    for name in ("replay", "correction_trace"):
        assert (results[name].status, results[name].detail) == (
            "failed",
            "The gate raised RuntimeError: snapshot store full",
        )
    assert results["fail_closed"].status == "passed"
    assert row_counts() == before
