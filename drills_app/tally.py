"""Judge each trial against its scenario's ground truth and add the figures up.

Per arm and scenario, and in total: stale-memory escape rate, unsupported-authorisation
rate, unknown-outcome resolution time, duplicate-effect rate, reconciliation latency, false
refusals, silent failures (success believed, postcondition absent) and exact replay success.
A rate is failures over the trials that expose an arm to that failure; counts cover every
trial, and the protocol passes only when every count it must keep at zero is zero.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from drills_app.world import ArmResult, Scenario
from reconcile_app.canonical import same_value
from reconcile_app.models import DecisionSnapshot
from reconcile_app.selectors.metrics import percentiles

logger = logging.getLogger(__name__)

ARMS = ("protocol", "baseline")
# The failure a scenario's `hazards` entry exposes an arm to, and the trial flag it sets.
EXPOSURE = {
    "stale_memory_escapes": "stale",
    "unsupported_authorisations": "unsupported",
    "duplicate_effects": "duplicate",
    "silent_failures": "silent",
}
MUST_BE_ZERO = (*EXPOSURE, "false_refusals", "replay_failures")


def replay_snapshots(arms: list[ArmResult]) -> bool:
    """Replay each protocol snapshot as recorded; False when replay is not available here."""
    try:
        from reconcile_app.services.replay import snapshot_replay
    except ImportError:
        return False
    wanted = [snapshot_id for arm in arms for snapshot_id in arm.snapshot_ids]
    snapshots = {
        snapshot.snapshot_id: snapshot
        for snapshot in DecisionSnapshot.objects.filter(snapshot_id__in=wanted).select_related(
            "contract"
        )
    }
    for arm in arms:
        for snapshot_id in arm.snapshot_ids:
            try:
                exact = bool(
                    snapshot_replay(snapshot=snapshots[snapshot_id], mode="as_recorded").exact
                )
                error = ""
            except Exception as exc:  # a replay that cannot run is a failed replay, not a crash
                logger.exception("replay of %s failed", snapshot_id)
                exact, error = False, f"{type(exc).__name__}: {exc}"
            arm.replays.append({"snapshot_id": snapshot_id, "exact": exact, "error": error})
    return True


def judge(scenario: Scenario, arm: ArmResult) -> dict[str, bool]:
    """The trial's failures, from the owner's account (executions, final value)."""
    return {
        "stale_memory_escapes": arm.executions > 0 and not scenario.safe_at_commit,
        "unsupported_authorisations": arm.authorised and not scenario.premise_supported,
        "duplicate_effects": arm.executions > 1,
        "silent_failures": arm.believed_success
        and not same_value(arm.final_value, arm.expected_value),
        "false_refusals": scenario.premise_supported and not arm.authorised,
        "replay_failures": any(not item["exact"] for item in arm.replays),
    }


def _figures(
    scenarios: dict[str, Scenario], arms: list[ArmResult], replay_measured: bool, arm_name: str
) -> dict[str, Any]:
    counts: Counter[str] = Counter()
    exposed: Counter[str] = Counter()
    exposed_failures: Counter[str] = Counter()
    for arm in arms:
        scenario = scenarios[arm.scenario]
        flags = judge(scenario, arm)
        counts.update(name for name, failed in flags.items() if failed)
        for name, hazard in EXPOSURE.items():
            # A trial in which the failure happened was exposed to it, whatever its scenario
            # names: else the rate would read 0 beside a count that is not.
            if hazard in scenario.hazards or flags[name]:
                exposed[name] += 1
                exposed_failures[name] += flags[name]
        if scenario.premise_supported:
            exposed["false_refusals"] += 1
            exposed_failures["false_refusals"] += flags["false_refusals"]
    figures: dict[str, Any] = {"trials": len(arms)}
    for name in (*EXPOSURE, "false_refusals"):
        figures[name] = counts[name]
        figures[f"{name}_exposed"] = exposed[name]
        figures[f"{name}_rate"] = exposed_failures[name] / exposed[name] if exposed[name] else None
    resolution = [ms for arm in arms for ms in arm.resolution_ms]
    unknown = sum(arm.unknown_outcomes for arm in arms)
    figures["unknown_outcomes"] = unknown
    figures["unknown_outcomes_resolved"] = len(resolution)
    # The baseline never resolves an unknown outcome: it guesses "failed" and sends again.
    figures["unknown_resolution_ms"] = percentiles(resolution)
    figures["reconcile_latency_ms"] = percentiles([ms for arm in arms for ms in arm.reconcile_ms])
    replays = [item for arm in arms for item in arm.replays]
    measured = replay_measured and arm_name == "protocol"
    figures["replay_measured"] = measured
    figures["replays"] = len(replays) if measured else None
    figures["replays_exact"] = sum(item["exact"] for item in replays) if measured else None
    figures["replay_failures"] = counts["replay_failures"] if measured else None
    figures["exact_replay_rate"] = (
        figures["replays_exact"] / len(replays) if measured and replays else None
    )
    return figures


def _trial_dict(scenario: Scenario, arm: ArmResult) -> dict[str, Any]:
    return {
        "subject": arm.subject,
        "decision": arm.decision,
        "reasons": arm.reasons,
        "verdicts": arm.verdicts,
        "authorised": arm.authorised,
        "believed_success": arm.believed_success,
        "executions": arm.executions,
        "final_value": arm.final_value,
        "steps": arm.steps,
        "snapshot_ids": arm.snapshot_ids,
        "effect_keys": arm.effect_keys,
        "failures": [name for name, failed in judge(scenario, arm).items() if failed],
    }


def suite_report(
    *,
    scenarios: list[Scenario],
    arms: list[ArmResult],
    replay_measured: bool,
    parameters: dict[str, Any],
) -> dict[str, Any]:
    by_name = {scenario.name: scenario for scenario in scenarios}
    rows = []
    for scenario in scenarios:
        row: dict[str, Any] = {
            "name": scenario.name,
            "title": scenario.title,
            "hazards": sorted(scenario.hazards),
        }
        for arm_name in ARMS:
            mine = [a for a in arms if a.scenario == scenario.name and a.arm == arm_name]
            figures = _figures(by_name, mine, replay_measured, arm_name)
            outcomes = Counter(" → ".join(a.steps) for a in mine).most_common(1)
            figures["outcome"] = outcomes[0][0] if outcomes else ""
            figures["trials_detail"] = [_trial_dict(scenario, a) for a in mine]
            row[arm_name] = figures
        failed = {
            name
            for a in arms
            if a.scenario == scenario.name and a.arm == "baseline"
            for name, hit in judge(scenario, a).items()
            if hit
        }
        # A scenario that cannot make the baseline fail is not testing anything.
        row["baseline_failed_as_expected"] = (
            not failed
            if not scenario.hazards
            else any(
                name in failed for name, hazard in EXPOSURE.items() if hazard in scenario.hazards
            )
        )
        rows.append(row)
    totals = {
        arm_name: _figures(
            by_name, [a for a in arms if a.arm == arm_name], replay_measured, arm_name
        )
        for arm_name in ARMS
    }
    protocol = totals["protocol"]
    failures = [
        f"protocol {name.replace('_', ' ')}: {protocol[name]}"
        for name in MUST_BE_ZERO
        if protocol.get(name)
    ]
    return {
        "parameters": parameters,
        "scenarios": rows,
        "totals": totals,
        "replay_measured": replay_measured,
        "passed": not failures,
        "failures": failures,
        "baseline_failed_where_expected": all(row["baseline_failed_as_expected"] for row in rows),
    }
