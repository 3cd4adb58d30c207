"""Seed 000's failure-injection suite, run on the protocol and on the naive baseline.

"Test the boundary, not only the answer": each scenario changes a fact after it was
remembered, delays a source, sets two sources against each other, revokes support, loses an
answer, races a commit, collides keys or drops a postcondition — and every trial runs the
full protocol (reconcile → commit with If-Match and Idempotency-Key → readback / resolution,
through the real services on the drill's sandbox sources) and the baseline on identical
inputs. What happened is then read from the owner (its ledger and its record), not taken
from either arm's account of itself.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from typing import Any

from django.utils import timezone

from drills_app import poisoned
from drills_app.baseline import baseline_arm
from drills_app.cleanup import drill_rows_close
from drills_app.protocol import protocol_arm
from drills_app.tally import replay_snapshots, suite_report
from drills_app.world import (
    CASE_SOURCE,
    DECISION_CLASS,
    FIELD,
    INITIAL_VERSION,
    ArmResult,
    Observation,
    Scenario,
    drill_estate_ensure,
    faults_clear,
    world_prepare,
)
from reconcile_app.models import Principal
from reconcile_app.selectors.contracts import contract_current, contract_spec
from sandbox_app.models import SandboxEffect, SandboxRecord

logger = logging.getLogger(__name__)

MIN = timedelta(minutes=1)
HOUR = timedelta(hours=1)
RELEASE = "release_collections_hold"
RETAIN = "retain_manual_review"
HARM = frozenset({"stale", "unsupported"})


def settled(**rest: Any) -> Scenario:
    """A scenario on an account collectible for 20 minutes, evidenced, remembered 10 minutes
    ago as collectible: the common ground most seed cases then disturb one way."""
    return Scenario(
        state="collect",
        state_age=20 * MIN,
        evidence=(Observation("collect", 20 * MIN),),
        claim_value="collect",
        claim_age=10 * MIN,
        **rest,
    )


SCENARIOS: tuple[Scenario, ...] = (
    settled(
        name="confirmed_memory",
        title="control: a memory confirmed by fresh, evidenced state",
        action=RETAIN,
        resulting_value="manual_review",
        premise_supported=True,
        safe_at_commit=True,
    ),
    Scenario(
        name="superseded_memory",
        title="a remembered status superseded by a later authoritative transition",
        state="hold",
        state_age=20 * MIN,
        evidence=(
            Observation("collect", 4 * HOUR, note="Account in standard collections."),
            Observation("hold", 20 * MIN, note="Hardship approved: collections on hold."),
        ),
        claim_value="collect",
        claim_age=3 * HOUR,
        action=RELEASE,
        resulting_value="collect",
        premise_supported=False,
        safe_at_commit=False,
        hazards=HARM,
    ),
    settled(
        name="fresh_read_stale_source",
        title="a source fresh by read time but stale by its own update contract",
        action=RELEASE,
        resulting_value="collect",
        fault_before_decision=("lag", 3600),
        premise_supported=False,
        safe_at_commit=False,
        hazards=HARM,
    ),
    Scenario(
        name="sources_disagree_valid_time",
        title="two sources that disagree about valid time",
        state="collect",
        state_age=2 * HOUR,
        evidence=(
            Observation("collect", 3 * HOUR),
            Observation("hold", 30 * MIN, source="hardship-register", note="Hardship approved."),
        ),
        claim_value="collect",
        claim_age=150 * MIN,
        action=RELEASE,
        resulting_value="collect",
        premise_supported=False,
        safe_at_commit=False,
        hazards=HARM,
    ),
    Scenario(
        name="revoked_support",
        title="a memory whose supporting evidence has been revoked",
        state="collect",
        state_age=HOUR,
        evidence=(Observation("collect", HOUR, note="Income document: collectible."),),
        claim_value="collect",
        claim_age=50 * MIN,
        action=RELEASE,
        resulting_value="collect",
        revoke_support=True,
        premise_supported=False,
        safe_at_commit=False,
        hazards=HARM,
    ),
    settled(
        name="timeout_after_commit",
        title="a tool timeout after the effect commits",
        action=RETAIN,
        resulting_value="manual_review",
        fault_before_commit="timeout_after_commit",
        premise_supported=True,
        safe_at_commit=True,
        hazards=frozenset({"duplicate"}),
    ),
    settled(
        name="state_change_before_commit",
        title="a state update between policy evaluation and execution",
        action=RELEASE,
        resulting_value="collect",
        change_before_commit="hold",
        premise_supported=True,
        safe_at_commit=False,
        hazards=frozenset({"stale"}),
    ),
    settled(
        name="idempotency_key_collision",
        title="an idempotency-key collision (the same key, another request)",
        action=RETAIN,
        resulting_value="manual_review",
        retry="other_body",
        premise_supported=True,
        safe_at_commit=True,
        hazards=frozenset({"duplicate"}),
    ),
    settled(
        name="missing_dedupe_record",
        title="a retry with no deduplication record",
        action=RETAIN,
        resulting_value="manual_review",
        retry="same",
        premise_supported=True,
        safe_at_commit=True,
        hazards=frozenset({"duplicate"}),
    ),
    settled(
        name="lost_dedupe_record",
        title="the owner commits, loses its deduplication record, and the answer is lost",
        action=RETAIN,
        resulting_value="manual_review",
        fault_before_commit="timeout_after_commit",
        also_before_commit=("lose_dedupe_record",),
        premise_supported=True,
        safe_at_commit=True,
        hazards=frozenset({"duplicate"}),
    ),
    settled(
        name="postcondition_absent",
        title="a successful command whose postcondition is absent on readback",
        action=RETAIN,
        resulting_value="manual_review",
        fault_before_commit="drop_postcondition",
        premise_supported=True,
        safe_at_commit=True,
        hazards=frozenset({"silent"}),
    ),
)
SEED_SCENARIO_NAMES = tuple(scenario.name for scenario in SCENARIOS)
# Seed 000's suite, then the scenarios that test lineage rather than one decision.
SCENARIO_NAMES = (*SEED_SCENARIO_NAMES, poisoned.NAME)


@dataclass(frozen=True)
class DrillParameters:
    repeat: int = 3  # trials per scenario and arm
    scenarios: tuple[str, ...] = field(default_factory=lambda: SCENARIO_NAMES)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DrillParameters:
        return cls(
            repeat=int(data.get("repeat", 3)),
            scenarios=tuple(data.get("scenarios") or SCENARIO_NAMES),
        )

    def check(self) -> None:
        if not 1 <= self.repeat <= 100:
            raise ValueError("repeat must be between 1 and 100")
        unknown = sorted(set(self.scenarios) - set(SCENARIO_NAMES))
        if unknown:
            raise ValueError(f"unknown scenarios: {', '.join(unknown)}")

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "scenarios": list(self.scenarios)}


def _observe_owner(scenario: Scenario, arm: ArmResult) -> None:
    """The oracle: how many commands the owner executed, and what it holds now.

    Executions are counted twice over, and the larger count stands: the owner's ledger (one
    row per key it executed — unless it lost the row, `lose_dedupe_record`) and the record's
    own version (each write adds one, less the out-of-band write a scenario makes — unless
    the owner acknowledged without applying, `drop_postcondition`).
    """
    ledger = SandboxEffect.objects.filter(
        source=CASE_SOURCE, idempotency_key__startswith=f"{arm.subject}-"
    ).count()
    record = (
        SandboxRecord.objects.filter(source=CASE_SOURCE, subject=arm.subject, field=FIELD)
        .values("value", "version")
        .first()
    )
    writes = 0
    if record is not None:
        writes = record["version"] - INITIAL_VERSION - (1 if scenario.change_before_commit else 0)
    arm.executions = max(ledger, writes)
    arm.final_value = record["value"] if record is not None else None


def _trial(
    scenario: Scenario, index: int, tag: str, principal: Principal, spec: Any
) -> list[ArmResult]:
    arms = []
    for arm_name in ("protocol", "baseline"):
        now = timezone.now()
        subject = f"drill-{tag}-{scenario.name}-{index}-{arm_name[0]}"
        world = world_prepare(scenario=scenario, subject=subject, now=now)
        try:
            if arm_name == "protocol":
                arm = protocol_arm(world=world, principal=principal, now=now)
            else:
                arm = baseline_arm(world=world, spec=spec, now=now)
        finally:
            faults_clear()
        _observe_owner(scenario, arm)
        arms.append(arm)
    return arms


def drill_suite_run(
    parameters: DrillParameters,
    on_progress: Callable[[int, int, str], None] | None = None,
    *,
    started_by: Any = None,
    run_label: str = "",
    run_id: int | None = None,
) -> dict[str, Any]:
    """Run every selected scenario `repeat` times on both arms; the report is plain JSON.
    Whatever the trials leave open in the operators' queues is closed at the end, pass or
    fail (cleanup.py), naming `started_by` in the note. The attempts of one stored run
    share a prefix (`drill-{run_id}r…`): a worker killed mid-run leaves its message to be
    delivered again, and the next attempt closes what the dead one left open too."""
    parameters.check()
    started = time.perf_counter()
    principal = drill_estate_ensure()
    prefix = f"{run_id}r" if run_id is not None else ""
    # Unique subjects and keys: the drill can run again and again.
    tag = f"{prefix}{secrets.token_hex(3)}"
    subjects = f"drill-{prefix}" if prefix else f"drill-{tag}-"
    by = getattr(started_by, "username", "") or "the command line"
    note = (
        f"Closed by the drill {run_label or 'run'} (subjects {subjects}*, started by {by}) "
        "that opened it: a drill's question, nobody's to answer."
    )
    try:
        report = _suite(parameters, on_progress, principal, tag)
    except BaseException:
        # Close what the trials opened before the failure, without hiding why they stopped.
        try:
            drill_rows_close(principal=principal, subjects=subjects, note=note)
        except Exception:
            logger.exception("the failed drill's open rows could not be closed")
        raise
    closed = drill_rows_close(principal=principal, subjects=subjects, note=note)
    report["closed"] = closed.as_dict()
    report["tag"] = tag
    report["elapsed_seconds"] = round(time.perf_counter() - started, 3)
    return report


def _suite(
    parameters: DrillParameters,
    on_progress: Callable[[int, int, str], None] | None,
    principal: Principal,
    tag: str,
) -> dict[str, Any]:
    spec = contract_spec(contract_current(decision_class=DECISION_CLASS, version=None))
    selected = [scenario for scenario in SCENARIOS if scenario.name in parameters.scenarios]
    poisoning = poisoned.NAME in parameters.scenarios
    total = (len(selected) + poisoning) * parameters.repeat
    arms: list[ArmResult] = []
    done = 0
    for scenario in selected:
        for index in range(parameters.repeat):
            arms.extend(_trial(scenario, index, tag, principal, spec))
            done += 1
            if on_progress is not None:
                on_progress(done, total, scenario.name)
    trials: list[poisoned.PoisonedTrial] = []
    for index in range(parameters.repeat if poisoning else 0):
        subject = f"drill-{tag}-{poisoned.NAME}-{index}"
        try:
            trials.append(
                poisoned.poisoned_memory_trial(
                    principal=principal, subject=subject, now=timezone.now()
                )
            )
        finally:
            faults_clear()
        done += 1
        if on_progress is not None:
            on_progress(done, total, poisoned.NAME)
    replay_measured = replay_snapshots([arm for arm in arms if arm.arm == "protocol"])
    report = suite_report(
        scenarios=selected,
        arms=arms,
        replay_measured=replay_measured,
        parameters=parameters.as_dict(),
    )
    if poisoning:
        section = poisoned.poisoned_memory_report(trials)
        report["poisoned_memory"] = section
        report["failures"] += [f"{poisoned.NAME}: {failure}" for failure in section["failures"]]
        report["passed"] = report["passed"] and section["passed"]
    return report
