"""Release gates: what a contract version must pass before it may become active.

docs/api.md "Contracts" and seed 002's reconstruction obligation test: at level
`reconstruct` (any hard trigger, or no assessment) every gate is required; at
`narrative_ok` only the four that keep memory from authorising and the engine failing
closed. One module per gate, each saying what it proves and which seed test it is:

- `replay` (replay.py): a scratch snapshot under this version, and the class's recent live
  snapshots, replay exactly as recorded.
- `fail_closed` (fail_closed.py): a required field stale, unavailable, timed out or
  quarantined refuses.
- `claims_cannot_authorise` (claims.py): varying only the claims never changes the decision.
- `contradiction_handling` (contradictions.py): `contradictions: escalate | refuse` is
  what an evidence-vs-state contradiction yields.
- `policy_evaluates` (policy_evaluates.py): every rule evaluates, quickly, with each optional field
  present and absent, on the contract's own values and on those its fields' owners returned
  in recent reads (recorded.py).
- `invariance` (invariance.py): histories that reduce to the same state decide alike;
  duplicated and reordered delivery folds identically (contracts with a reducer).
- `correction_trace` (correction_trace.py): a correction's blast radius reaches the snapshot
  that used the entry, and taints it.

The gates run against any version, draft included, and never read an owner system: the
engine gates decide synthetic states (world.py), `policy_evaluates` also the values recorded
in recent state reads; replay and correction_trace share one drill
(drill.py) in a scratch estate that is always rolled back (scratch.py), so the first of the
two carries its time. A gate that raises is reported `failed` with the exception; nothing
propagates.
`policy_evaluates` runs first (its results are still reported in GATE_NAMES order): a rule
it finds too slow fails every gate still to run, unrun.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from reconcile_app.models import Contract
from reconcile_app.selectors.contracts import contract_spec
from reconcile_app.services.release_gates import (
    claims,
    contradictions,
    correction_trace,
    fail_closed,
    invariance,
    policy_evaluates,
    replay,
)
from reconcile_app.services.release_gates.world import Finding, World

__all__ = ["GATE_NAMES", "LEVELS", "REQUIRED_AT_NARRATIVE_OK", "GateResult", "release_gates_run"]

logger = logging.getLogger(__name__)

GATE_NAMES = (
    "replay",
    "fail_closed",
    "claims_cannot_authorise",
    "contradiction_handling",
    "policy_evaluates",
    "invariance",
    "correction_trace",
)
REQUIRED_AT_NARRATIVE_OK = (
    "fail_closed",
    "claims_cannot_authorise",
    "contradiction_handling",
    "policy_evaluates",
)
LEVELS = ("reconstruct", "narrative_ok")

_GATES: dict[str, Callable[[World], Finding]] = {
    "replay": replay.replay,
    "fail_closed": fail_closed.fail_closed,
    "claims_cannot_authorise": claims.claims_cannot_authorise,
    "contradiction_handling": contradictions.contradiction_handling,
    "policy_evaluates": policy_evaluates.policy_evaluates,
    "invariance": invariance.invariance,
    "correction_trace": correction_trace.correction_trace,
}


@dataclass(frozen=True)
class GateResult:
    name: str  # one of GATE_NAMES
    status: str  # passed | failed | not_required
    detail: str  # what was checked (how many cases); on failure, the first failing case
    duration_ms: int
    checks: int = 0  # cases evaluated

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "detail": self.detail,
            "duration_ms": self.duration_ms,
            "checks": self.checks,
        }


def _not_required(name: str, level: str, spec_reducer: str) -> str | None:
    """Why a gate is not required at this level (None: it is)."""
    if level == "narrative_ok" and name not in REQUIRED_AT_NARRATIVE_OK:
        return (
            f"The obligation assessment (level narrative_ok) does not require the {name} "
            "gate; only level reconstruct does."
        )
    if name == "invariance" and not spec_reducer:
        return "The contract has no reducer, so there is no history to substitute."
    return None


# Run first, though reported in GATE_NAMES order: it times each rule, and the others
# evaluate the rules hundreds of times. A rule taking seconds kept them past the worker's
# time limit; killed, the activation stayed `running` and was queued again every 5 minutes.
RUN_FIRST = "policy_evaluates"


def release_gates_run(contract: Contract, *, level: str) -> list[GateResult]:
    """Every gate, in GATE_NAMES order, against this (possibly draft) contract version."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
    world: World | None = None
    unprepared = ""
    try:
        world = World(contract_spec(contract), timezone.now())
    except Exception as exc:
        logger.exception("release gates could not read %s", contract)
        unprepared = f"The version could not be read for its gates: {type(exc).__name__}: {exc}"
    results: dict[str, GateResult] = {}
    halted = ""
    for name in (RUN_FIRST, *(name for name in GATE_NAMES if name != RUN_FIRST)):
        started = time.perf_counter()
        reason = _not_required(name, level, contract.reducer)
        if reason is not None:
            results[name] = GateResult(name, "not_required", reason, 0)
            continue
        if halted:
            results[name] = GateResult(name, "failed", halted, 0)
            continue
        try:
            finding = _GATES[name](world) if world else Finding(False, unprepared, 0)
        except Exception as exc:
            # A gate that cannot run has not shown the version safe: it fails, with why.
            logger.exception("release gate %s raised on %s", name, contract)
            finding = Finding(False, f"The gate raised {type(exc).__name__}: {exc}", 0)
        if finding.halts:
            halted = (
                f"Not run: {name} found a rule too slow to evaluate, and this gate would "
                "evaluate it many times."
            )
        results[name] = GateResult(
            name=name,
            status="passed" if finding.passed else "failed",
            detail=finding.detail,
            duration_ms=round((time.perf_counter() - started) * 1000),
            checks=finding.checks,
        )
    return [results[name] for name in GATE_NAMES]
