"""Gate `claims_cannot_authorise`: what an agent remembers never changes the decision.

The thesis (DESIGN.md; seed 000): memory may advise, state must authorise. Claims are
classified and kept in the snapshot, but policy sees state fields only. Seed 002's
history-substitution argument applied to memory: varying only what the agent says it
remembers must leave `content["decision"]` exactly as it is.

Method: for each base state (one the policy allows, one it denies, one it escalates, as far
as the rules let them be found), the decision without claims is the reference; then the
engine decides again with, per field, a claim that agrees with the state, one that
contradicts it with each other plausible value (the values that would change the decision
if memory could authorise), one superseded by later evidence, one out of scope (another
subject, another purpose), one of a quarantined memory class, one recalled from a memory
record (`memory_id`), one from a quarantined record, a claim on a field the contract does
not read, and all of them at once.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from reconcile_app.reconciliation.types import Claim
from reconcile_app.services.release_gates.candidates import other_values
from reconcile_app.services.release_gates.world import (
    STATE_AGE,
    Finding,
    State,
    World,
    decision_text,
)

QUARANTINED_CLASS = "release-gate-quarantined"
MEMORY_ID = "mem-release-gate"
QUARANTINED_MEMORY = "mem-release-gate-quarantined"


def claim_variants(world: World, state: State) -> list[tuple[str, list[Claim]]]:
    """(what the claims are, the claims) for this state."""
    variants: list[tuple[str, list[Claim]]] = []
    everything: list[Claim] = []
    for field, value in state.values.items():
        agreeing = world.claim(field, value)
        cases = [(f"a claim agreeing {field}={value!r}", agreeing)]
        for other in other_values(world.candidates[field], value):
            cases += [
                (f"a claim contradicting {field}={other!r}", world.claim(field, other)),
                (
                    f"a claim {field}={other!r} superseded by later evidence",
                    world.claim(field, other, written_at=world.now - STATE_AGE * 2),
                ),
                (
                    f"a claim {field}={other!r} about another subject",
                    world.claim(field, other, subject="release-gate:other-subject"),
                ),
                (
                    f"a claim {field}={other!r} for another purpose",
                    world.claim(field, other, purpose="release-gate-other-purpose"),
                ),
                (
                    f"a claim {field}={other!r} of a quarantined memory class",
                    world.claim(field, other, memory_class=QUARANTINED_CLASS),
                ),
                (
                    f"a claim {field}={other!r} recalled from memory {MEMORY_ID}",
                    world.claim(field, other, memory_id=MEMORY_ID),
                ),
                (
                    f"a claim {field}={other!r} recalled from a quarantined memory",
                    world.claim(field, other, memory_id=QUARANTINED_MEMORY),
                ),
            ]
        cases.append(
            (
                f"a claim agreeing {field}={value!r} from memory",
                replace(agreeing, memory_id=MEMORY_ID),
            )
        )
        variants.extend((said, [claim]) for said, claim in cases)
        everything.extend(claim for _, claim in cases)
    unknown = world.claim("release_gate_unread_field", True)
    variants.append(("a claim on a field the contract does not read", [unknown]))
    variants.append((f"all {len(everything) + 1} claims at once", [*everything, unknown]))
    return variants


def claims_cannot_authorise(world: World) -> Finding:
    spec = world.spec
    quarantine: dict[str, Any] = {
        "quarantined_classes": frozenset({QUARANTINED_CLASS}),
        "quarantined_memories": {QUARANTINED_MEMORY: "q-release-gate"},
    }
    checks = 0
    bases = world.base_states()
    for state, reference in bases:
        for said, claims in claim_variants(world, state):
            checks += 1
            decision = world.evaluate(state, claims=claims, **quarantine)["decision"]
            if decision != reference:
                return Finding(
                    False,
                    f"{said[0].upper()}{said[1:]} changed the decision in state "
                    f"{state.describe(spec)}: {decision_text(reference)} without claims, "
                    f"{decision_text(decision)} with it; expected the same decision.",
                    checks,
                )
    results = ", ".join(decision["result"] for _, decision in bases)
    return Finding(
        True,
        f"{checks} sets of claims (agreeing, contradicting, superseded, out of scope, "
        f"quarantined, recalled by memory_id) left the decision unchanged in base states "
        f"deciding {results}.",
        checks,
    )
