"""The replay and blast-radius drill, shared by the `replay` and `correction_trace` gates.

Seed 000: "Release gates should include replay and blast-radius drills"; the platform
"should identify affected decisions ... rebuild the snapshot under corrected data". One
scratch estate (scratch.py), one snapshot issued under the version, then in this order:

1. the snapshot is replayed as recorded (`snapshot_replay(mode="as_recorded")`);
2. an operator correction revokes the ledger entry supporting the traced field
   (`correction_create`), and the drill looks at what production would: the blast radius
   from that entry, the snapshot's taint, and its replay under today's corrections.

The order is production's: the correction is recorded after the snapshot's cut-off, so it
cannot disturb the as-recorded replay (Wednesday's replay never sees Thursday's
correction). Issuing once for both gates halves what the drill costs, which every load of a
version pays. The drill runs once per gate run (`World.memo`); what it found is kept as
plain data, since every row of it is rolled back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lineage_app.selectors.blast import blast_radius
from reconcile_app.choices import CorrectionStatus
from reconcile_app.models import DecisionReceipt, DecisionSnapshot, SnapshotTaint
from reconcile_app.selectors.lineage import evidence_roots
from reconcile_app.services.corrections import correction_create
from reconcile_app.services.release_gates.scratch import (
    ScratchSnapshot,
    scratch_estate,
    scratch_principal,
    scratch_snapshot,
    traced_field,
)
from reconcile_app.services.release_gates.world import World
from reconcile_app.services.replay import ReplayResult, changed_paths, snapshot_replay


@dataclass(frozen=True)
class Drill:
    result: str  # what the scratch snapshot decided
    replay_mismatch: str | None  # None: it replayed exactly as recorded
    corrected: str  # what the correction revoked, in words
    trace_problems: tuple[str, ...]  # what the correction failed to reach or mark
    reached_snapshots: int
    trace_error: Exception | None = None  # the correction step raised (after the replay)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else f"{text[:117]}..."


def mismatch(snapshot: DecisionSnapshot, result: ReplayResult) -> str:
    """Where a replay departed from the recorded content, in words."""
    found = next(changed_paths(snapshot.content, result.content), None)
    if found is None:
        return f"its hash differs ({result.original_hash[:12]} != {result.replayed_hash[:12]})"
    path, recorded, replayed = found
    return f"{path} was recorded as {_short(recorded)}, replayed as {_short(replayed)}"


def _trace(issued: ScratchSnapshot, field: str, actor: Any) -> tuple[list[str], int]:
    """Correct the traced field's entry; what production would then fail to find or mark."""
    snapshot = issued.snapshot
    entry = issued.evidence[field]
    decision_id = DecisionReceipt.objects.get(snapshot=snapshot).decision_id
    correction = correction_create(
        evidence_id=entry, reason="release gate: correction trace drill", actor=actor
    )
    radius = blast_radius(
        evidence_roots(evidence_id=entry), kinds=["snapshot", "decision"], limit=100
    )
    reached = {f"{node['kind']}:{node['ref']}" for node in radius.nodes}
    missing = [
        node
        for node in (f"snapshot:{snapshot.snapshot_id}", f"decision:{decision_id}")
        if node not in reached
    ]
    problems = [f"its blast radius does not reach {', '.join(missing)}"] if missing else []
    if correction.status != CorrectionStatus.COMPLETE:
        problems.append(f"the correction is {correction.status}, not complete")
    if not SnapshotTaint.objects.filter(snapshot=snapshot, correction=correction).exists():
        problems.append(f"{snapshot.snapshot_id} is not marked tainted")
    if snapshot_replay(snapshot=snapshot, mode="corrected", refold=False).exact:
        problems.append(f"replaying {snapshot.snapshot_id} under the correction still matches")
    return problems, radius.counts.get("snapshot", 0)


def drill_run(world: World) -> Drill:
    field = traced_field(world)
    with scratch_estate():
        principal = scratch_principal()
        issued = scratch_snapshot(world, principal)
        snapshot = issued.snapshot
        replayed = snapshot_replay(snapshot=snapshot, mode="as_recorded", refold=False)
        corrected = (
            f"Revoking the scratch entry {issued.evidence[field]} supporting {field} = "
            f"{issued.state.values[field]!r}"
        )
        problems: list[str] = []
        reached, error = 0, None
        try:
            problems, reached = _trace(issued, field, principal.user)
        except Exception as exc:
            # The replay half stands on its own; the correction half reports the exception.
            error = exc
        drill = Drill(
            result=snapshot.result,
            replay_mismatch=None if replayed.exact else mismatch(snapshot, replayed),
            corrected=corrected,
            trace_problems=tuple(problems),
            reached_snapshots=reached,
            trace_error=error,
        )
    return drill


def world_drill(world: World) -> Drill:
    """The drill for this gate run, run by whichever of its two gates comes first."""
    return world.memo("drill", lambda: drill_run(world))
