"""Gate `contradiction_handling`: the contract's `contradictions` setting is what happens.

Seed 002's release tests: "inject ... a contradiction ...; confirm refusal or visible
escalation". When retained evidence observed after the owner's valid time says another
value than the owner's read, the engine keeps both (a contradiction row) and, by the
contract's `contradictions:` setting, refuses (an engine refusal, before any rule) or
escalates (after the deny rules, before allow: decision.py's order). Smoothing it over, or
honouring the other setting, fails the gate.

Method: for each base state whose decision the setting can change (any, under `refuse`;
under `escalate` one no deny rule matched, since a matching deny comes first) and each field
read, one unwithdrawn evidence entry observed half-way between the state's valid time and
now says another plausible value. Expected: the decision is the setting (`refuse` or
`escalate`), permits nothing, gives the reason `contradiction`, and the snapshot content
records an evidence-vs-state contradiction on that field.
"""

from __future__ import annotations

from typing import Any

from reconcile_app.choices import ContradictionKind, ContradictionPolicy, DecisionResult
from reconcile_app.services.release_gates.candidates import other_values
from reconcile_app.services.release_gates.world import (
    STATE_AGE,
    Finding,
    State,
    World,
    decision_text,
)

# Denials decided after the escalation step: an escalation still wins over them.
_LATER_DENIALS = frozenset({"no_rule_matched", "action_not_permitted"})


def _reaches_escalation(decision: dict[str, Any]) -> bool:
    if decision["result"] in (DecisionResult.ALLOW, DecisionResult.ESCALATE):
        return True
    codes = {reason["code"] for reason in decision["reasons"]}
    return decision["result"] == DecisionResult.DENY and codes <= _LATER_DENIALS


def contradiction_handling(world: World) -> Finding:
    spec = world.spec
    setting = spec.contradictions
    if setting not in ContradictionPolicy.values:
        return Finding(False, f"`contradictions: {setting}` is neither escalate nor refuse.", 0)
    bases: list[tuple[State, dict[str, Any]]] = [
        (state, decision)
        for state, decision in world.base_states()
        if setting == ContradictionPolicy.REFUSE or _reaches_escalation(decision)
    ]
    if not bases:
        return Finding(
            True,
            "Every state found is denied by a rule before the escalation step, so "
            "`contradictions: escalate` cannot change a decision of this contract.",
            0,
        )
    checks = 0
    for state, base in bases:
        for field, value in state.values.items():
            other = other_values(world.candidates[field], value)[0]
            later = world.evidence(
                field, other, observed_at=world.now - STATE_AGE / 2, tag="contradiction"
            )
            content = world.evaluate(state, evidence=[*world.support(state), later])
            decision = content["decision"]
            checks += 1
            recorded = any(
                item["kind"] == ContradictionKind.EVIDENCE_VS_STATE and item["field"] == field
                for item in content["contradictions"]
            )
            codes = {reason["code"] for reason in decision["reasons"]}
            if (
                decision["result"] != setting
                or decision["permitted_actions"]
                or "contradiction" not in codes
                or not recorded
            ):
                return Finding(
                    False,
                    f"Evidence observed after the state's valid time saying {field}={other!r} "
                    f"against the owner's {value!r} ({state.describe(spec)}) gave "
                    f"{decision_text(decision)}"
                    + ("" if recorded else ", with no contradiction recorded")
                    + f"; expected {setting} (`contradictions: {setting}`) with reason "
                    f"contradiction (without it: {decision_text(base)}).",
                    checks,
                )
    return Finding(
        True,
        f"An evidence-vs-state contradiction on each of {len(spec.fields)} fields gave "
        f"{setting}, as `contradictions: {setting}` says, in {checks} cases.",
        checks,
    )
