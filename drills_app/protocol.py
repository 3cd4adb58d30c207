"""The protocol arm of a drill trial: the full boundary, through the real services.

Reconcile with the remembered claim; commit only what the decision permits, against the
version the snapshot read (If-Match) with an Idempotency-Key; on an unknown outcome, retry
with the same key and body (the owner's ledger answers, nothing is re-sent blindly); after
a precondition failure, reconcile again; read the target back. Every step is recorded so the
console can show what the protocol did.
"""

from __future__ import annotations

import time
from typing import Any

from drills_app.world import (
    DECISION_CLASS,
    FIELD,
    PURPOSE,
    ArmResult,
    World,
    change_out_of_band,
    commit_faults_inject,
    fault_inject,
)
from reconcile_app.canonical import same_value
from reconcile_app.choices import DecisionResult, EffectStatus, ReadStatus
from reconcile_app.errors import DomainError
from reconcile_app.models import DecisionSnapshot, Effect, EffectEvent, Principal
from reconcile_app.services.effects import (
    OwnerUnavailable,
    effect_commit,
    effect_readback,
    effect_resolve_manually,
)
from reconcile_app.services.reconcile import ReconcileRequest, snapshot_issue
from reconcile_app.sources import adapter_for


def _reconcile(principal: Principal, world: World, arm: ArmResult) -> DecisionSnapshot:
    scenario = world.scenario
    started = time.perf_counter()
    snapshot = snapshot_issue(
        principal=principal,
        request=ReconcileRequest(
            subject=world.subject,
            purpose=PURPOSE,
            decision_class=DECISION_CLASS,
            proposed_action=scenario.action,
            claims=world.claims,
        ),
    )
    arm.reconcile_ms.append((time.perf_counter() - started) * 1000.0)
    arm.snapshot_ids.append(snapshot.snapshot_id)
    decision = snapshot.content["decision"]
    arm.decision = decision["result"]
    arm.reasons = [reason["code"] for reason in decision["reasons"]]
    arm.verdicts = [claim["verdict"] for claim in snapshot.content["claims"]]
    arm.steps.append(
        f"reconcile → {arm.decision} ({', '.join(arm.reasons)}); claim {', '.join(arm.verdicts)}"
    )
    return snapshot


def _commit(
    principal: Principal,
    snapshot: DecisionSnapshot,
    key: str,
    action: str,
    value: Any,
    arm: ArmResult,
) -> Effect | None:
    version = snapshot.content["fields"][FIELD]["version"]
    try:
        result = effect_commit(
            principal=principal,
            idempotency_key=key,
            if_match=f'"{version}"',
            snapshot_id=snapshot.snapshot_id,
            action=action,
            resulting_value=value,
        )
    except DomainError as exc:
        arm.steps.append(f"commit {key[-2:]} → {exc.status} {exc.code}")
        return None
    effect = result.effect
    if key not in arm.effect_keys:
        arm.effect_keys.append(key)
    code = effect.outcome.get("code", "") if effect.status == EffectStatus.REJECTED else ""
    replayed = " (original receipt)" if result.replayed else ""
    arm.steps.append(f"commit {key[-2:]} → {effect.status}{f' {code}' if code else ''}{replayed}")
    return effect


def _resolution_ms(effect: Effect) -> float | None:
    """From the timeout to the event that settled it, on the effect's own timeline."""
    events = list(
        EffectEvent.objects.filter(
            effect=effect, kind__in=["timeout", "resolution", "manual_resolution"]
        ).values_list("kind", "at")
    )
    lost = next((at for kind, at in events if kind == "timeout"), None)
    settled = next((at for kind, at in events if kind != "timeout" and lost and at >= lost), None)
    if lost is None or settled is None:
        return None
    return (settled - lost).total_seconds() * 1000.0


def _operator_settles(effect: Effect, principal: Principal, arm: ArmResult) -> Effect:
    """What neither the owner's ledger nor the target settles goes to a person (the triage
    queue); the drill plays the on-call operator, who looks at the owner's record and says what
    it shows. Their word only makes the effect `accepted`: the readback still has to prove it.
    Left unknown, every drill run would add a row to the operators' real queue.
    """
    read = adapter_for(effect.source).read(effect.subject, effect.field)
    applied = (
        read.status == ReadStatus.OK
        and read.version == effect.expected_version + 1
        and same_value(read.value, effect.resulting_value)
    )
    outcome = "succeeded" if applied else "not_executed"
    settled = effect_resolve_manually(
        idempotency_key=effect.idempotency_key,
        outcome=outcome,
        reason=(
            f"drill: the owner's record shows {read.value!r} at version {read.version}, "
            f"sent against {effect.expected_version}"
        ),
        actor=principal.user,
    )
    arm.steps.append(f"operator reads the owner's record → {outcome}")
    return settled


def protocol_arm(*, world: World, principal: Principal, now: Any) -> ArmResult:
    scenario = world.scenario
    arm = ArmResult(arm="protocol", scenario=scenario.name, subject=world.subject)
    if scenario.fault_before_decision:
        fault_inject(*scenario.fault_before_decision, once=False)
    snapshot = _reconcile(principal, world, arm)
    decision = snapshot.content["decision"]
    arm.authorised = (
        decision["result"] == DecisionResult.ALLOW
        and scenario.action in decision["permitted_actions"]
    )
    if not arm.authorised:
        return arm
    if scenario.change_before_commit:
        change_out_of_band(world=world, value=scenario.change_before_commit, now=now)
        arm.steps.append(f"owner changed to {scenario.change_before_commit!r} meanwhile")
    commit_faults_inject(scenario)
    key = f"{world.subject}-k1"
    effect = _commit(principal, snapshot, key, scenario.action, scenario.resulting_value, arm)
    if effect is not None and effect.status == EffectStatus.UNKNOWN:
        arm.unknown_outcomes += 1
        # The protocol's retry: the same key and body, answered from the owner's ledger.
        effect = _commit(principal, snapshot, key, scenario.action, scenario.resulting_value, arm)
    if effect is not None and effect.status == EffectStatus.UNKNOWN:
        effect = _operator_settles(effect, principal, arm)
    if effect is not None and effect.status == EffectStatus.REJECTED:
        _reconcile(principal, world, arm)  # a precondition failure forces another read
    retried: Effect | None = None
    if effect is not None and scenario.retry:
        action, value = (
            scenario.retry_body
            if scenario.retry == "other_body"
            else (scenario.action, scenario.resulting_value)
        )
        retried = _commit(principal, snapshot, key, action, value, arm)
    if effect is not None:
        effect.refresh_from_db()
        if effect.status == EffectStatus.ACCEPTED:
            try:
                effect = effect_readback(effect_id=effect.pk)
                arm.steps.append(f"readback → {effect.status}")
            except OwnerUnavailable as exc:
                arm.steps.append(f"readback deferred: {exc}")
        settled = _resolution_ms(effect)
        if settled is not None:
            arm.resolution_ms.append(settled)
        arm.believed_success = effect.status in (EffectStatus.ACCEPTED, EffectStatus.VERIFIED)
        if arm.believed_success:
            arm.expected_value = scenario.resulting_value
        if retried is not None and retried.status in (EffectStatus.ACCEPTED, EffectStatus.VERIFIED):
            # The retry's answer is what the agent goes on, as the baseline's is: a success
            # for another body under a used key says that body is what the owner holds. The
            # owner then says whether it is (a key reuse answered with the original receipt
            # is a silent failure), and a same-body retry believes what it already did.
            arm.believed_success = True
            arm.expected_value = value
    return arm
