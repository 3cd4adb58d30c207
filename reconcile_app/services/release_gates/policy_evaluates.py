"""Gate `policy_evaluates`: every rule evaluates, whichever optional fields are missing.

A field that is not `ok` is absent from `fields`, and a condition that cannot be evaluated
fails closed (docs/api.md "Contracts"): a deny or escalate rule that errors whenever, say,
the complaints service is down turns every such decision into a deny nobody wrote. Seed
002's release tests ask for the missing-source case; this is its policy half (the engine
half is `fail_closed`).

Method: each rule is evaluated with the CEL evaluation the engine uses
(`policy.evaluate_explained`) for every combination of optional fields present and absent
(all 2^n when n <= 6; otherwise each one absent alone, all absent and all present), with
present fields taking each plausible value (`candidates`), and with `effect` as the engine
builds it for each binding (nothing proposed, each action, each action with a value). Any
error, or a result that is not a boolean, fails the gate, naming the rule, the absent
fields and the values.
"""

from __future__ import annotations

import itertools
from typing import Any

from reconcile_app import policy
from reconcile_app.services.release_gates.candidates import rule_labels
from reconcile_app.services.release_gates.world import Finding, World, proposal

MAX_FULL_COMBINATIONS = 6


def presence_combinations(optional: list[str]) -> list[frozenset[str]]:
    """Which optional fields are absent, case by case (seed 002: each present and absent)."""
    if len(optional) <= MAX_FULL_COMBINATIONS:
        return [
            frozenset(absent)
            for size in range(len(optional) + 1)
            for absent in itertools.combinations(optional, size)
        ]
    return [frozenset(), *(frozenset({name}) for name in optional), frozenset(optional)]


def _value_sets(world: World, absent: frozenset[str]) -> list[dict[str, Any]]:
    """The present fields at their first plausible value, then each field's other values
    in turn (one at a time keeps the count linear in the number of values)."""
    present = [field.name for field in world.spec.fields if field.name not in absent]
    base = {name: world.candidates[name][0] for name in present}
    found = [base]
    for name in present:
        found.extend({**base, name: value} for value in world.candidates[name][1:])
    return found


def _absence(absent: frozenset[str]) -> str:
    if not absent:
        return "every optional field present"
    return f"{', '.join(sorted(absent))} absent"


def policy_evaluates(world: World) -> Finding:
    spec = world.spec
    labels = rule_labels(spec)
    optional = [field.name for field in spec.fields if not field.required]
    effects = [binding.effect() for binding in world.bindings()]
    proposals = [proposal(binding) for binding in world.bindings()]
    combinations = presence_combinations(optional)
    checks = 0
    for absent in combinations:
        for fields in _value_sets(world, absent):
            for effect, proposed in zip(effects, proposals, strict=True):
                for rule, label in zip(spec.rules, labels, strict=True):
                    checks += 1
                    result, error = policy.evaluate_explained(rule.expression, fields, effect)
                    if result is None:
                        return Finding(
                            False,
                            f"{label} cannot be evaluated with {_absence(absent)} "
                            f"(fields {fields!r}; {proposed}): {error}; it fails closed "
                            + ("(never matches)." if rule.kind == "allow" else "(matches)."),
                            checks,
                        )
    return Finding(
        True,
        f"{len(spec.rules)} rules evaluated to a boolean in {checks} cases: "
        f"{len(combinations)} combinations of {len(optional)} optional fields present and "
        f"absent, {len(effects)} proposals.",
        checks,
    )
