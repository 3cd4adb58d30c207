"""Gate `policy_evaluates`: every rule evaluates, whichever optional fields are missing.

A field that is not `ok` is absent from `fields`, and a condition that cannot be evaluated
fails closed (docs/api.md "Contracts"): a deny or escalate rule that errors whenever, say,
the complaints service is down turns every such decision into a deny nobody wrote. Seed
002's release tests ask for the missing-source case; this is its policy half (the engine
half is `fail_closed`).

Method: each rule is evaluated with the CEL evaluation the engine uses (the state's
`policy.variables` converted once, then `policy.evaluate_over_explained` for each rule) for
every combination of optional fields present and absent (all 2^n when n <= 6; otherwise
each one absent alone, all absent and all present), with present fields taking each
plausible value (`candidates`) and each value the owners have returned for them in recent
reads (`recorded`: a rule comparing a string with `true` or `5` errors on what production
reads, though never on the contract's own literals), and with
`effect` as the engine builds it for each binding (nothing proposed, each action, each action
with a value). Any error, or a result that is not a boolean, fails the gate, naming the rule,
the absent fields and the values. So does a rule that takes longer than
`SLOW_EVALUATION_SECONDS` to evaluate (timed up to three times, the fastest counting):
every decision of the class waits on it, and a version whose nested comprehensions took half
a second per evaluation passed every gate and made each reconcile forty times slower.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

from reconcile_app import policy
from reconcile_app.reconciliation.types import ContractSpec
from reconcile_app.services.release_gates.candidates import rule_labels, same_literal
from reconcile_app.services.release_gates.recorded import Recorded, recorded_values
from reconcile_app.services.release_gates.world import Finding, World, proposal

MAX_FULL_COMBINATIONS = 6
# Recorded values paired with other fields' candidates: the rest add little but time.
MAX_PAIRED = 2000
# A rule evaluates in microseconds (~22 µs with its parse); one taking this long is a loop.
SLOW_EVALUATION_SECONDS = 0.05


def _timed(expression: str, over: Any) -> tuple[bool | None, str, float]:
    """The evaluation, and the seconds it took; a slow one is timed again, twice at most,
    and the fastest counts, so that a pause of the process (a collection, a busy machine
    running the gates of every activation) is not taken for the rule's cost."""
    started = time.perf_counter()
    result, error = policy.evaluate_over_explained(expression, over)
    took = time.perf_counter() - started
    for _ in range(2):
        if took <= SLOW_EVALUATION_SECONDS:
            break
        started = time.perf_counter()
        policy.evaluate_over_explained(expression, over)
        took = min(took, time.perf_counter() - started)
    return result, error, took


def presence_combinations(optional: list[str]) -> list[frozenset[str]]:
    """Which optional fields are absent, case by case (seed 002: each present and absent)."""
    if len(optional) <= MAX_FULL_COMBINATIONS:
        return [
            frozenset(absent)
            for size in range(len(optional) + 1)
            for absent in itertools.combinations(optional, size)
        ]
    return [frozenset(), *(frozenset({name}) for name in optional), frozenset(optional)]


def _with_recorded(
    candidates: dict[str, list[Any]], recorded: dict[str, list[Any]]
) -> dict[str, list[Any]]:
    """Each field's plausible values, then the recorded ones not among them (by type and
    value: `True` is not `1`)."""
    merged = {}
    for name, values in candidates.items():
        extra = [
            value
            for value in recorded.get(name, ())
            if not any(same_literal(value, seen) for seen in values)
        ]
        merged[name] = [*values, *extra]
    return merged


def _value_sets(
    spec: ContractSpec, candidates: dict[str, list[Any]], absent: frozenset[str]
) -> list[dict[str, Any]]:
    """The present fields at their first plausible value, then each field's other values
    in turn (one at a time keeps the count linear in the number of values)."""
    present = [field.name for field in spec.fields if field.name not in absent]
    base = {name: candidates[name][0] for name in present}
    found = [base]
    for name in present:
        found.extend({**base, name: value} for value in candidates[name][1:])
    return found


def _absence(absent: frozenset[str]) -> str:
    if not absent:
        return "every optional field present"
    return f"{', '.join(sorted(absent))} absent"


def _recorded_note(fields: dict[str, Any], recorded: dict[str, list[Any]]) -> str:
    """Which of these values an owner has returned in a recent read, said in the finding
    (a reviewer otherwise takes `'collect'` for a value the gate made up)."""
    real = [
        f"{name}={value!r}"
        for name, value in fields.items()
        if any(same_literal(value, seen) for seen in recorded.get(name, ()))
    ]
    return f"; read from its owner in a recent decision: {', '.join(real)}" if real else ""


def _recorded_sets(
    spec: ContractSpec, candidates: dict[str, list[Any]], recorded: Recorded
) -> list[tuple[frozenset[str], dict[str, Any]]]:
    """The states the owners' values make: each recorded state (fields it did not read at
    their first candidate), then each recorded value beside each candidate of every other
    field (a guard on another field hides a mistyped value only at some of its values),
    `MAX_PAIRED` at most."""
    names = [field.name for field in spec.fields]
    base = {name: candidates[name][0] for name in names}
    found: list[tuple[frozenset[str], dict[str, Any]]] = [
        (frozenset(), {**base, **state}) for state in recorded.states
    ]
    paired = [
        {**base, name: value, other: candidate}
        for name in names
        for value in recorded.values.get(name, ())
        for other in names
        if other != name
        for candidate in candidates[other]
    ]
    return found + [(frozenset(), fields) for fields in paired[:MAX_PAIRED]]


def policy_evaluates(world: World) -> Finding:
    spec = world.spec
    recorded = world.memo("recorded_values", lambda: recorded_values(spec))
    candidates = _with_recorded(world.candidates, recorded.values)
    labels = rule_labels(spec)
    optional = [field.name for field in spec.fields if not field.required]
    effects = [binding.effect() for binding in world.bindings()]
    proposals = [proposal(binding) for binding in world.bindings()]
    combinations = presence_combinations(optional)
    cases = [
        (absent, fields)
        for absent in combinations
        for fields in _value_sets(spec, candidates, absent)
    ] + _recorded_sets(spec, candidates, recorded)
    checks = 0
    for absent, fields in cases:
        for effect, proposed in zip(effects, proposals, strict=True):
            # Converted once for every rule, as a decision does (`policy.variables`).
            over = policy.variables(fields, effect)
            for rule, label in zip(spec.rules, labels, strict=True):
                checks += 1
                result, error, took = _timed(rule.expression, over)
                if took > SLOW_EVALUATION_SECONDS:
                    return Finding(
                        False,
                        f"{label} took {took * 1000:,.0f} ms to evaluate with "
                        f"{_absence(absent)} (fields {fields!r}; {proposed}); every decision "
                        f"of the class waits on it, and a rule may take at most "
                        f"{SLOW_EVALUATION_SECONDS * 1000:,.0f} ms.",
                        checks,
                        halts=True,
                    )
                if result is None:
                    return Finding(
                        False,
                        f"{label} cannot be evaluated with {_absence(absent)} "
                        f"(fields {fields!r}{_recorded_note(fields, recorded.values)}; "
                        f"{proposed}): {error}; it fails closed "
                        + ("(never matches)." if rule.kind == "allow" else "(matches)."),
                        checks,
                    )
    real = sum(len(values) for values in recorded.values.values())
    return Finding(
        True,
        # A case is one state with one proposal; `checks` counts each rule in each case.
        f"{len(spec.rules)} rules evaluated to a boolean in each of {len(cases) * len(effects)} "
        f"cases ({checks} evaluations): {len(cases)} states by "
        f"{len(effects)} proposals; the states from {len(combinations)} combinations of "
        f"{len(optional)} optional fields present and absent"
        + (
            f"; {real} values owners returned in recent reads, and {len(recorded.states)} "
            "states recent decisions read."
            if real
            else "."
        ),
        checks,
    )
