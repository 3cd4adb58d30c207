"""Gate `replay`: decisions under this version can be rebuilt exactly, and recent ones are.

Seed 002's first release test: "Replay one historic decision using only retained source
versions, reducer version, policy and authority"; seed 000: "Release gates should include
replay ... drills". DESIGN.md: replay rebuilds a snapshot from what was recorded by its
cut-off, and its hash must equal the original.

Method: (a) in the scratch estate, a snapshot is issued under this version
(`scratch.scratch_snapshot`: real ledger entries, `snapshot_persist`) and replayed with
`services.replay.snapshot_replay(mode="as_recorded")`; (b) the class's most recent live
snapshots (any version, read only) are replayed the same way. Both must be exact. The gate
reads no owner system, so event-sourced reads are taken as recorded (`refold=False`): what
is proven is that the engine rebuilds the same content from what was recorded (the
reducer's own determinism is the `invariance` gate's).
"""

from __future__ import annotations

from typing import Any

from reconcile_app.canonical import same_value
from reconcile_app.models import DecisionSnapshot
from reconcile_app.services.release_gates.scratch import (
    scratch_estate,
    scratch_principal,
    scratch_snapshot,
)
from reconcile_app.services.release_gates.world import Finding, World
from reconcile_app.services.replay import ReplayResult, snapshot_replay

RECENT_LIVE_SNAPSHOTS = 20


def first_difference(before: Any, after: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """The first path where two snapshot contents differ, with both values."""
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after)):
            where = f"{path}.{key}" if path else str(key)
            if key not in before or key not in after:
                return where, before.get(key, "(missing)"), after.get(key, "(missing)")
            found = first_difference(before[key], after[key], where)
            if found:
                return found
        return None
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for index, (old, new) in enumerate(zip(before, after, strict=True)):
            found = first_difference(old, new, f"{path}[{index}]")
            if found:
                return found
        return None
    return None if same_value(before, after) else (path, before, after)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else f"{text[:117]}..."


def _mismatch(snapshot: DecisionSnapshot, result: ReplayResult) -> str:
    found = first_difference(snapshot.content, result.content)
    if found is None:
        return f"its hash differs ({result.original_hash[:12]} != {result.replayed_hash[:12]})"
    path, recorded, replayed = found
    return f"{path} was recorded as {_short(recorded)}, replayed as {_short(replayed)}"


def replay(world: World) -> Finding:
    spec = world.spec
    with scratch_estate():
        issued = scratch_snapshot(world, scratch_principal())
        scratch = issued.snapshot
        result = snapshot_replay(snapshot=scratch, mode="as_recorded", refold=False)
        failure = None if result.exact else _mismatch(scratch, result)
        scratch_result = scratch.result
    if failure is not None:
        return Finding(
            False,
            f"A scratch snapshot issued under {spec.decision_class}@{spec.version} "
            f"(deciding {scratch_result}) does not replay exactly as recorded: {failure}.",
            1,
        )
    recent = list(
        DecisionSnapshot.objects.filter(decision_class=spec.decision_class)
        .select_related("contract")
        .order_by("-issued_at", "-id")[:RECENT_LIVE_SNAPSHOTS]
    )
    for checked, snapshot in enumerate(recent, start=2):
        result = snapshot_replay(snapshot=snapshot, mode="as_recorded", refold=False)
        if not result.exact:
            return Finding(
                False,
                f"Live snapshot {snapshot.snapshot_id} ({snapshot.contract}, issued "
                f"{snapshot.issued_at.isoformat()}) does not replay exactly as recorded: "
                f"{_mismatch(snapshot, result)}.",
                checked,
            )
    live = (
        f", and so did the class's {len(recent)} most recent live snapshots (event-sourced "
        "reads as recorded: the gate reads no owner)."
        if recent
        else "; the class has no live snapshot yet."
    )
    return Finding(
        True,
        f"A scratch snapshot issued under this version (deciding {scratch_result}) replayed "
        f"exactly as recorded{live}",
        1 + len(recent),
    )
