"""Gate `fail_closed`: a required field that is not current refuses, whatever else holds.

Seed 002's release tests: "inject ... a required-source timeout; confirm refusal". A
required field stale, unavailable, timed out or quarantined must make the decision `refuse`
and permit nothing, in a state the policy would otherwise allow, deny or escalate.

Method: for each base state (`World.base_states`) and each required field, the field's read
is replaced by each bad state (the others stay ok and supported), and the engine decides.
Staleness is produced as it happens in production: an `ok` read observed longer ago than
the field's `max_age_seconds`, which the engine's freshness check must catch; the other
statuses are what adapters report.
"""

from __future__ import annotations

from datetime import timedelta

from reconcile_app.choices import DecisionResult, ReadStatus
from reconcile_app.reconciliation.types import FieldRead
from reconcile_app.services.release_gates.world import Finding, State, World, decision_text

BAD_STATES = ("stale", ReadStatus.UNAVAILABLE, ReadStatus.TIMEOUT, ReadStatus.QUARANTINED)


def _bad_read(world: World, state: State, field: str, bad: str) -> tuple[FieldRead, str]:
    """The replacement read and how to say it."""
    if bad == "stale":
        spec = world.spec.field(field)
        assert spec is not None
        age = spec.max_age_seconds + 60
        read = world.ok_read(
            field, state.values[field], observed_at=world.now - timedelta(seconds=age)
        )
        return read, f"{field} stale (observed {age}s ago, limit {spec.max_age_seconds}s)"
    return world.failed_read(field, bad), f"{field} {bad}"


def fail_closed(world: World) -> Finding:
    spec = world.spec
    required = [field.name for field in spec.fields if field.required]
    checks = 0
    bases = world.base_states()
    for state, base_decision in bases:
        for field in required:
            for bad in BAD_STATES:
                read, said = _bad_read(world, state, field, str(bad))
                reads = [read if item.field == field else item for item in world.reads(state)]
                decision = world.evaluate(state, reads=reads)["decision"]
                checks += 1
                if decision["result"] != DecisionResult.REFUSE or decision["permitted_actions"]:
                    return Finding(
                        False,
                        f"With {said} and the other fields ok ({state.describe(spec)}), the "
                        f"decision was {decision_text(decision)}; expected refuse permitting "
                        f"nothing (the same state with every field ok: "
                        f"{decision_text(base_decision)}).",
                        checks,
                    )
    results = ", ".join(decision["result"] for _, decision in bases)
    return Finding(
        True,
        f"Each of {len(required)} required fields stale, unavailable, timed out or "
        f"quarantined refused in {checks} cases, from base states deciding {results}.",
        checks,
    )
