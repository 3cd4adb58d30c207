"""Seed 000's failure-injection suite: the protocol lets nothing through, the baseline does."""

from __future__ import annotations

import io
import sys
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from drills_app import scenarios
from drills_app.baseline import baseline_arm
from drills_app.choices import DrillRunKind, DrillRunStatus
from drills_app.models import DrillRun
from drills_app.runs import drill_run_execute, drill_run_start
from drills_app.scenarios import (
    SCENARIO_NAMES,
    SEED_SCENARIO_NAMES,
    DrillParameters,
    drill_suite_run,
)
from drills_app.world import CASE_SOURCE, COMPLAINTS_SOURCE
from reconcile_app.choices import EffectStatus
from reconcile_app.errors import Conflict
from reconcile_app.models import AuditEvent, Contradiction, Effect, Escalation
from sandbox_app.models import SandboxEffect, SandboxFault
from tests.conftest import make_agent


@pytest.fixture
def report(db) -> dict[str, Any]:
    return drill_suite_run(DrillParameters(repeat=1))


def rows(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["name"]: row for row in report["scenarios"]}


def test_every_seed_scenario_runs_on_both_arms(report):
    assert [row["name"] for row in report["scenarios"]] == list(SEED_SCENARIO_NAMES)
    assert (*SEED_SCENARIO_NAMES, "poisoned_memory") == SCENARIO_NAMES
    assert report["poisoned_memory"]["trials"] == 1
    for row in report["scenarios"]:
        assert row["protocol"]["trials"] == row["baseline"]["trials"] == 1


def test_protocol_lets_nothing_escape_and_duplicates_nothing(report):
    protocol = report["totals"]["protocol"]
    for name in (
        "stale_memory_escapes",
        "unsupported_authorisations",
        "duplicate_effects",
        "silent_failures",
        "false_refusals",
    ):
        assert protocol[name] == 0, name
    assert protocol["stale_memory_escapes_exposed"] == 5
    assert protocol["duplicate_effects_exposed"] == 4
    assert report["passed"] and report["failures"] == []


def test_every_protocol_snapshot_replays_exactly(report):
    protocol = report["totals"]["protocol"]
    assert protocol["replay_measured"]
    assert protocol["replays"] == protocol["replays_exact"] >= len(SEED_SCENARIO_NAMES)
    assert protocol["exact_replay_rate"] == 1.0


def test_baseline_fails_where_the_seed_says_it_does(report):
    by_name = rows(report)
    baseline = report["totals"]["baseline"]
    assert baseline["stale_memory_escapes_rate"] == 1.0
    assert baseline["unsupported_authorisations_rate"] == 1.0
    assert baseline["duplicate_effects_rate"] == 1.0
    assert baseline["silent_failures_rate"] == 1.0
    for name in ("superseded_memory", "fresh_read_stale_source", "revoked_support"):
        assert by_name[name]["baseline"]["stale_memory_escapes"] == 1, name
    assert by_name["state_change_before_commit"]["baseline"]["stale_memory_escapes"] == 1
    for name in (
        "timeout_after_commit",
        "idempotency_key_collision",
        "missing_dedupe_record",
        "lost_dedupe_record",
    ):
        assert by_name[name]["baseline"]["duplicate_effects"] == 1, name
    assert by_name["postcondition_absent"]["baseline"]["silent_failures"] == 1
    assert by_name["confirmed_memory"]["baseline"]["trials_detail"][0]["failures"] == []
    assert report["baseline_failed_where_expected"]


def test_protocol_outcomes_are_the_seeds(report):
    by_name = rows(report)

    def trial(name: str) -> dict[str, Any]:
        return by_name[name]["protocol"]["trials_detail"][0]

    assert trial("superseded_memory")["decision"] == "deny"
    assert trial("superseded_memory")["verdicts"] == ["superseded"]
    assert "stale_state" in trial("fresh_read_stale_source")["reasons"]
    assert trial("sources_disagree_valid_time")["decision"] == "escalate"
    assert trial("revoked_support")["reasons"] == ["evidence_missing"]
    assert any(
        "rejected version_changed" in step for step in trial("state_change_before_commit")["steps"]
    )
    assert any(
        "422 idempotency_key_reused" in step for step in trial("idempotency_key_collision")["steps"]
    )
    assert any("original receipt" in step for step in trial("missing_dedupe_record")["steps"])
    assert trial("postcondition_absent")["steps"][-1] == "readback → postcondition_failed"
    # The owner lost the key and the answer: the retry asks its ledger and reads the target,
    # never re-sends; nothing proves the outcome, so it goes to an operator (played by the
    # drill), whose word the readback then checks — and the owner executed it exactly once.
    lost = trial("lost_dedupe_record")
    assert lost["steps"][-4:] == [
        "commit k1 → unknown",
        "commit k1 → unknown (original receipt)",
        "operator reads the owner's record → succeeded",
        "readback → verified",
    ]
    assert lost["executions"] == 1 and lost["failures"] == []
    lost_effect = Effect.objects.get(subject=lost["subject"])
    assert lost_effect.status == EffectStatus.VERIFIED
    assert not SandboxEffect.objects.filter(idempotency_key=lost_effect.idempotency_key).exists()
    timeout = by_name["timeout_after_commit"]["protocol"]
    assert timeout["unknown_outcomes"] == timeout["unknown_outcomes_resolved"] == 1
    assert timeout["unknown_resolution_ms"]["p50"] >= 0
    assert report["totals"]["protocol"]["reconcile_latency_ms"]["p95"] > 0
    assert report["totals"]["baseline"]["unknown_resolution_ms"] is None  # it never resolves


def test_owner_executed_each_protocol_effect_at_most_once(report):
    for row in report["scenarios"]:
        assert row["protocol"]["trials_detail"][0]["executions"] <= 1, row["name"]
    timeout_subject = rows(report)["timeout_after_commit"]["protocol"]["trials_detail"][0][
        "subject"
    ]
    effect = Effect.objects.get(subject=timeout_subject)
    assert effect.status == EffectStatus.VERIFIED
    assert SandboxEffect.objects.filter(idempotency_key=effect.idempotency_key).count() == 1


def test_drill_leaves_no_fault_and_escalates_to_its_own_owner(report):
    assert not SandboxFault.objects.filter(source__in=[CASE_SOURCE, COMPLAINTS_SOURCE]).exists()
    escalation = Escalation.objects.get()
    assert escalation.owner == "reconcile-drills"
    assert Contradiction.objects.filter(subject__startswith="drill-").exists()


def test_drill_leaves_the_operators_queues_as_it_found_them(db, operator):
    # Someone's real question, open before the drill, and an open one of the drill agent's
    # on a subject of no run of this drill: the drill leaves both alone.
    real = make_agent("real-agent", [])
    kept = Escalation.objects.create(
        escalation_id="esc-real",
        code="needs_review",
        owner="collections-ops",
        next_action="review",
        requested_by=real.principal,
        opened_at=timezone.now(),
    )
    earlier = drill_suite_run(DrillParameters(repeat=1, scenarios=("sources_disagree_valid_time",)))
    Escalation.objects.filter(status="rejected").update(status="open")  # as if left open
    left_open = set(Escalation.objects.filter(status="open").values_list("pk", flat=True))
    run = drill_run_start(
        kind=DrillRunKind.DRILL, parameters={"repeat": 1}, started_by=operator.user
    )

    finished = drill_run_execute(run_id=run.pk)

    # The run opened an escalation and contradictions on its own subjects, and closed them.
    tag = finished.results["tag"]
    assert tag != earlier["tag"]
    assert finished.results["closed"]["escalations"] == 1
    assert finished.results["closed"]["contradictions"] >= 1
    assert set(Escalation.objects.filter(status="open").values_list("pk", flat=True)) == left_open
    closed = Escalation.objects.get(
        status="rejected", snapshot__subject__startswith=f"drill-{tag}-"
    )
    # The system's doing (starting a drill takes an operator, deciding a reviewer), naming
    # the run and who started it.
    assert closed.decided_by is None
    assert f"run #{run.pk}" in closed.rationale and operator.user.username in closed.rationale
    assert not Contradiction.objects.filter(status="open", subject__startswith=f"drill-{tag}-")
    resolved = Contradiction.objects.filter(subject__startswith=f"drill-{tag}-")
    assert {row.resolved_by for row in resolved} == {None}
    closing = AuditEvent.objects.filter(
        action__in=["escalation.reject", "contradiction.resolve"], reason__contains=f"run #{run.pk}"
    )
    assert closing.count() == 1 + resolved.count()
    assert {event.actor_name for event in closing} == {"system"}
    kept.refresh_from_db()
    assert kept.status == "open"


def test_a_drill_that_fails_half_way_still_closes_what_it_opened(db, monkeypatch):
    original = scenarios.replay_snapshots

    def broken(arms):
        original(arms)
        raise RuntimeError("replay service down")

    monkeypatch.setattr(scenarios, "replay_snapshots", broken)
    with pytest.raises(RuntimeError):
        drill_suite_run(DrillParameters(repeat=1, scenarios=("sources_disagree_valid_time",)))

    assert Escalation.objects.filter(status="rejected").exists()
    assert not Escalation.objects.filter(status="open").exists()


def test_drill_runs_again_on_the_same_database(report):
    again = drill_suite_run(DrillParameters(repeat=1, scenarios=("timeout_after_commit",)))
    assert again["passed"] and again["tag"] != report["tag"]


def test_command_prints_both_arms_stores_the_run_and_exits_zero(db):
    out = io.StringIO()
    call_command("drill", "--repeat", "1", stdout=out)
    text = out.getvalue()
    assert "protocol: PASSED" in text
    assert "baseline failed where the seed says it does: yes" in text
    assert "stale-memory escape rate" in text and "100.0% (5/5)" in text
    assert "closed what the drill left open in the operators' queues: 1 escalations" in text
    run = DrillRun.objects.get()
    assert run.kind == DrillRunKind.DRILL and run.status == DrillRunStatus.COMPLETE
    assert run.passed is True
    assert run.parameters == {"repeat": 1, "scenarios": list(SCENARIO_NAMES)}


def test_command_exits_non_zero_when_the_protocol_lets_memory_escape(db, monkeypatch):
    def naive_protocol(*, world, principal, now):
        spec = scenarios.contract_spec(
            scenarios.contract_current(decision_class=scenarios.DECISION_CLASS)
        )
        arm = baseline_arm(world=world, spec=spec, now=now)
        arm.arm = "protocol"  # the naive arm, standing in for the protocol
        return arm

    monkeypatch.setattr(scenarios, "protocol_arm", naive_protocol)
    with pytest.raises(CommandError, match="stale memory escapes"):
        call_command(
            "drill", "--repeat", "1", "--scenario", "superseded_memory", stdout=io.StringIO()
        )
    run = DrillRun.objects.get()
    assert run.status == DrillRunStatus.COMPLETE and run.passed is False


def test_replay_is_reported_not_measured_when_the_service_is_absent(db, monkeypatch):
    monkeypatch.setitem(sys.modules, "reconcile_app.services.replay", None)
    out = io.StringIO()
    call_command("drill", "--repeat", "1", "--scenario", "confirmed_memory", stdout=out)
    assert "not measured" in out.getvalue()
    results = DrillRun.objects.get().results
    assert results["replay_measured"] is False
    assert results["totals"]["protocol"]["replays"] is None


def test_drills_run_one_at_a_time(db):
    drill_run_start(kind=DrillRunKind.DRILL, parameters={})
    with pytest.raises(Conflict):
        drill_run_start(kind=DrillRunKind.DRILL, parameters={})
    with pytest.raises(CommandError, match="one at a time"):
        call_command("drill", "--repeat", "1", stdout=io.StringIO())
    # The benchmark touches no sandbox: it may run alongside.
    drill_run_start(kind=DrillRunKind.DRIFT_BENCHMARK, parameters={})
