"""The naive-memory baseline: the undifferentiated architecture seed 000 argues against.

Same inputs, same contract policy, same owner, same adapter as the protocol; only the memory
mechanism differs. The baseline
- treats its remembered claims as the state and evaluates the contract's policy over them
  (deny → escalate → allow, conditions that cannot be evaluated fail closed, as in the
  engine), with no read, no freshness, no evidence and no contradiction check;
- sends the command without a precondition: whatever version the owner holds when the tool
  runs is the version it writes over (an unconditional write);
- has no deduplication record: a timeout is taken as failure and the command is sent again
  under a fresh request id, and a retry is simply another command;
- never reads back: a receipt is success.
"""

from __future__ import annotations

import secrets
from typing import Any

from drills_app.world import (
    CASE_SOURCE,
    FIELD,
    ArmResult,
    World,
    change_out_of_band,
    commit_faults_inject,
    fault_inject,
)
from reconcile_app import policy
from reconcile_app.choices import DecisionResult, ReadStatus
from reconcile_app.models import Source
from reconcile_app.reconciliation.types import Claim, ContractSpec
from reconcile_app.sources import ApplyOutcome, EffectCommand, adapter_for

# How many times the baseline sends a command again after a timeout.
RETRIES_ON_TIMEOUT = 1


def naive_decide(
    *, spec: ContractSpec, subject: str, claims: list[Claim], proposed_action: str
) -> tuple[str, list[str], list[str]]:
    """The contract's policy over remembered values: (result, permitted actions, codes)."""
    fields = {claim.field: claim.value for claim in claims if claim.subject == subject}
    for kind, result in (("deny", DecisionResult.DENY), ("escalate", DecisionResult.ESCALATE)):
        codes = [
            rule.code
            for rule in spec.rules
            if rule.kind == kind and policy.evaluate(rule.expression, fields) is not False
        ]
        if codes:
            return str(result), [], codes
    for rule in spec.rules:
        if rule.kind == "allow" and policy.evaluate(rule.expression, fields) is True:
            return str(DecisionResult.ALLOW), list(rule.permits), ["allowed"]
    return str(DecisionResult.DENY), [], ["no_rule_matched"]


def naive_send(
    *, subject: str, action: str, resulting_value: Any, request_prefix: str, arm: ArmResult
) -> bool:
    """Send one command the naive way; True when the baseline believes it succeeded."""
    adapter = adapter_for(Source.objects.get(name=CASE_SOURCE))
    for _attempt in range(1 + RETRIES_ON_TIMEOUT):
        current = adapter.read(subject, FIELD)
        if current.status != ReadStatus.OK or current.version is None:
            arm.steps.append(f"tool failed: owner {current.status}")
            return False
        key = f"{request_prefix}-{secrets.token_hex(4)}"  # a fresh id every time: no dedupe
        arm.effect_keys.append(key)
        applied = adapter.apply(
            EffectCommand(
                idempotency_key=key,
                subject=subject,
                field=FIELD,
                action=action,
                resulting_value=resulting_value,
                expected_version=current.version,
            )
        )
        if applied.outcome == ApplyOutcome.ACCEPTED:
            arm.steps.append(f"{action} sent → receipt, taken as done")
            arm.expected_value = resulting_value
            return True
        if applied.outcome == ApplyOutcome.REJECTED:
            arm.steps.append(f"{action} sent → rejected ({applied.code})")
            return False
        arm.unknown_outcomes += 1
        arm.steps.append(f"{action} sent → timeout, taken as failed")
    return False


def baseline_arm(*, world: World, spec: ContractSpec, now: Any) -> ArmResult:
    scenario = world.scenario
    arm = ArmResult(arm="baseline", scenario=scenario.name, subject=world.subject)
    if scenario.fault_before_decision:
        fault_inject(
            *scenario.fault_before_decision, once=False
        )  # the same input; it never reads, though
    result, permitted, codes = naive_decide(
        spec=spec, subject=world.subject, claims=world.claims, proposed_action=scenario.action
    )
    arm.decision, arm.reasons = result, codes
    arm.verdicts = ["taken as state" for _ in world.claims]
    arm.authorised = result == DecisionResult.ALLOW and scenario.action in permitted
    if not arm.authorised:
        arm.steps.append(f"{result} from memory ({', '.join(codes)})")
        return arm
    arm.steps.append(f"allow from memory ({scenario.claim_value!r} taken as state)")
    if scenario.change_before_commit:
        change_out_of_band(world=world, value=scenario.change_before_commit, now=now)
        arm.steps.append(f"owner changed to {scenario.change_before_commit!r} meanwhile")
    commit_faults_inject(scenario)
    prefix = f"{world.subject}-naive"
    believed = naive_send(
        subject=world.subject,
        action=scenario.action,
        resulting_value=scenario.resulting_value,
        request_prefix=prefix,
        arm=arm,
    )
    if scenario.retry:
        action, value = (
            scenario.retry_body
            if scenario.retry == "other_body"
            else (scenario.action, scenario.resulting_value)
        )
        arm.steps.append("retry without a deduplication key")
        believed = (
            naive_send(
                subject=world.subject,
                action=action,
                resulting_value=value,
                request_prefix=prefix,
                arm=arm,
            )
            or believed
        )
    arm.believed_success = believed
    return arm
