"""Gate `replay`: decisions under this version can be rebuilt exactly, and recent ones are.

Seed 002's first release test: "Replay one historic decision using only retained source
versions, reducer version, policy and authority"; seed 000: "Release gates should include
replay ... drills". DESIGN.md: replay rebuilds a snapshot from what was recorded by its
cut-off, and its hash must equal the original.

Method: (a) the drill (drill.py) issues a snapshot under this version in the scratch estate
and replays it with `services.replay.snapshot_replay(mode="as_recorded")`; (b) the class's
most recent live snapshots (any version, read only) are replayed the same way. Both must be
exact. The gate reads no owner system, so event-sourced reads are taken as recorded
(`refold=False`): what is proven is that the engine rebuilds the same content from what was
recorded (the reducer's own determinism is the `invariance` gate's).
"""

from __future__ import annotations

from reconcile_app.models import DecisionSnapshot
from reconcile_app.services.release_gates.drill import mismatch, world_drill
from reconcile_app.services.release_gates.world import Finding, World
from reconcile_app.services.replay import snapshot_replay

RECENT_LIVE_SNAPSHOTS = 20


def replay(world: World) -> Finding:
    spec = world.spec
    drill = world_drill(world)
    if drill.replay_mismatch is not None:
        return Finding(
            False,
            f"A scratch snapshot issued under {spec.decision_class}@{spec.version} "
            f"(deciding {drill.result}) does not replay exactly as recorded: "
            f"{drill.replay_mismatch}.",
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
                f"{mismatch(snapshot, result)}.",
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
        f"A scratch snapshot issued under this version (deciding {drill.result}) replayed "
        f"exactly as recorded{live}",
        1 + len(recent),
    )
