"""Decide: engine refusals, then the contract's policy, over state fields only.

Order (docs/api.md): engine refusals (incomplete, stale, quarantined, evidence missing,
contradictions under `refuse`) → any `deny` match → a proposed value the action may not write
→ any `escalate` match → the first `allow` match → otherwise `deny` with `no_rule_matched`.
A condition that cannot be evaluated fails closed: it matches deny and escalate, never allow.
Claims never reach this module.
"""

from __future__ import annotations

from typing import Any

from reconcile_app import policy
from reconcile_app.canonical import same_value
from reconcile_app.choices import Completeness, ContradictionPolicy, DecisionResult, ReadStatus
from reconcile_app.reconciliation.support import support_for
from reconcile_app.reconciliation.types import Binding, ContractSpec, EvidenceView, FieldRead

# The code an engine refusal reports for a required field in each non-ok status.
REFUSAL_CODES = {
    ReadStatus.UNAVAILABLE: "state_unavailable",
    ReadStatus.TIMEOUT: "state_unavailable",
    ReadStatus.STALE: "stale_state",
    ReadStatus.QUARANTINED: "source_quarantined",
    ReadStatus.CONFLICT: "state_conflict",
}


# Every reason code the engine itself gives: a contract's own rule may not take one, or an
# agent reading `stale_state` under a rule's deny would reconcile again for a fresher read
# that cannot change the answer (services/contract_schema refuses it at load).
ENGINE_REASON_CODES = frozenset(REFUSAL_CODES.values()) | {
    "evidence_missing",
    "contradiction",
    "contract_incomplete",
    "allowed",
    "no_rule_matched",
    "action_not_permitted",
    "value_not_permitted",
    "denied",
    "escalated",
}


def _reason(code: str, detail: str) -> dict[str, str]:
    return {"code": code, "detail": detail}


def decide(
    contract: ContractSpec,
    binding: Binding,
    reads: dict[str, FieldRead],
    evidence: list[EvidenceView],
    contradictions: list[dict[str, Any]],
    capable_actions: frozenset[str],
) -> dict[str, Any]:
    """Engine refusals → deny → escalate → first allow → `no_rule_matched` (docs/api.md order)."""
    refusals: list[dict[str, str]] = []
    for spec in contract.fields:
        read = reads[spec.name]
        if not spec.required:
            continue
        if read.status != ReadStatus.OK:
            refusals.append(
                _reason(
                    REFUSAL_CODES[ReadStatus(read.status)],
                    f"required field {spec.name} from {spec.source} is {read.status}"
                    + (f": {read.detail}" if read.detail else ""),
                )
            )
        elif spec.evidence_required and not support_for(
            binding.subject, spec.name, read.value, evidence
        ):
            refusals.append(
                _reason(
                    "evidence_missing",
                    f"no unrevoked evidence supports {spec.name} = {read.value!r}",
                )
            )
    if contradictions and contract.contradictions == ContradictionPolicy.REFUSE:
        refusals.extend(_reason("contradiction", item["detail"]) for item in contradictions)
    if refusals:
        if any(
            reads[spec.name].status != ReadStatus.OK for spec in contract.fields if spec.required
        ):
            refusals.append(
                _reason("contract_incomplete", "a required field is not available as current")
            )
        return _decision(DecisionResult.REFUSE, [], refusals, contract)

    fields = {name: read.value for name, read in reads.items() if read.status == ReadStatus.OK}
    # Every rule reads the same fields and effect: converted for CEL once, not per rule.
    over = policy.variables(fields, binding.effect())
    denies = [
        _reason(rule.code or "denied", _match_detail(rule.expression, matched))
        for rule in contract.rules
        if rule.kind == "deny"
        for matched in [policy.evaluate_over(rule.expression, over)]
        if matched is not False
    ]
    if denies:
        return _decision(DecisionResult.DENY, [], denies, contract)
    unwritable = _value_not_permitted(contract, binding)
    if unwritable is not None:
        return _decision(DecisionResult.DENY, [], [unwritable], contract)

    escalations = [
        _reason(rule.code or "escalated", _match_detail(rule.expression, matched))
        for rule in contract.rules
        if rule.kind == "escalate"
        for matched in [policy.evaluate_over(rule.expression, over)]
        if matched is not False
    ]
    if contradictions and contract.contradictions == ContradictionPolicy.ESCALATE:
        escalations.extend(_reason("contradiction", item["detail"]) for item in contradictions)
    if escalations:
        return _decision(DecisionResult.ESCALATE, [], escalations, contract)

    for position, rule in enumerate(r for r in contract.rules if r.kind == "allow"):
        if policy.evaluate_over(rule.expression, over) is True:
            permitted = [
                action
                for action in rule.permits
                if action in contract.actions
                # "*" only in a snapshot recorded before wildcards were refused: its replay
                # decides as it was decided (the gate no longer honours one).
                and (action in capable_actions or "*" in capable_actions)
            ]
            if binding.proposed_action and binding.proposed_action not in permitted:
                return _decision(
                    DecisionResult.DENY,
                    [],
                    [
                        _reason(
                            "action_not_permitted",
                            f"allow rule {position + 1} does not permit {binding.proposed_action}",
                        )
                    ],
                    contract,
                )
            return _decision(
                DecisionResult.ALLOW,
                permitted,
                [_reason("allowed", f"allow rule {position + 1} matched: {rule.expression}")],
                contract,
            )
    return _decision(
        DecisionResult.DENY, [], [_reason("no_rule_matched", "no allow rule matched")], contract
    )


def _value_not_permitted(contract: ContractSpec, binding: Binding) -> dict[str, str] | None:
    """A proposed value outside the values the contract lets the action write is denied."""
    if not (binding.value_bound and binding.proposed_action):
        return None
    allowed = contract.action_values.get(binding.proposed_action)
    if allowed is None or any(same_value(binding.proposed_value, value) for value in allowed):
        return None
    return _reason(
        "value_not_permitted",
        f"{binding.proposed_action} may write {list(allowed)!r}, not {binding.proposed_value!r}",
    )


def _match_detail(expression: str, matched: bool | None) -> str:
    if matched is None:
        return f"condition could not be evaluated (fails closed): {expression}"
    return f"matched: {expression}"


def _decision(
    result: str, permitted: list[str], reasons: list[dict[str, str]], contract: ContractSpec
) -> dict[str, Any]:
    return {
        "result": str(result),
        "permitted_actions": permitted,
        "reasons": reasons,
        "policy_version": contract.policy_version,
    }


def completeness_of(contract: ContractSpec, reads: dict[str, FieldRead]) -> str:
    not_ok = [spec for spec in contract.fields if reads[spec.name].status != ReadStatus.OK]
    if any(spec.required for spec in not_ok):
        return Completeness.INCOMPLETE.value
    if not_ok:
        return Completeness.DEGRADED.value
    return Completeness.COMPLETE.value
