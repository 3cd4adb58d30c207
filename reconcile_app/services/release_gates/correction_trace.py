"""Gate `correction_trace`: a correction finds every decision that relied on the entry.

Seed 002's last release test: "Correct a source fact and trace every snapshot, decision and
effect that consumed the defective version"; seed 000: release gates include blast-radius
drills. A version whose snapshots did not join the lineage of the evidence they used could
not be recalled after a correction.

Method (the second half of drill.py, in the scratch estate): ledger entries support the
state the policy allows, a snapshot is issued on them, then an operator correction revokes
the entry supporting a required field (`services.corrections.correction_create`;
evidence-required fields first). Expected: the blast radius from that entry
(`selectors.lineage.evidence_roots` → `blast_radius`) reaches the snapshot and its
decision; the correction completes and marks the snapshot tainted (`SnapshotTaint`, which
stops it authorising a commit); replaying it under today's corrections no longer
reproduces it.
"""

from __future__ import annotations

from reconcile_app.services.release_gates.drill import world_drill
from reconcile_app.services.release_gates.world import Finding, World


def correction_trace(world: World) -> Finding:
    drill = world_drill(world)
    if drill.trace_error is not None:
        raise drill.trace_error
    if drill.trace_problems:
        return Finding(False, f"{drill.corrected}: {'; '.join(drill.trace_problems)}.", 1)
    return Finding(
        True,
        f"{drill.corrected} in the scratch estate reached the snapshot issued on it and its "
        f"decision ({drill.reached_snapshots} snapshot in the blast radius); the correction "
        "completed, tainted the snapshot, and its replay under the correction differs.",
        1,
    )
