"""Gate `correction_trace`: a correction finds every decision that relied on the entry.

Seed 002's last release test: "Correct a source fact and trace every snapshot, decision and
effect that consumed the defective version"; seed 000: release gates include blast-radius
drills ("the platform should identify affected decisions ... rebuild the snapshot under
corrected data"). A version whose snapshots do not join the lineage of the evidence they
used could not be recalled after a correction.

Method, in the scratch estate: scratch ledger entries support the state the policy allows,
a snapshot is issued on them (`scratch.scratch_snapshot`), then an operator correction
revokes the entry supporting a required field (`services.corrections.correction_create`,
evidence-required fields first). Expected: the blast radius from that entry
(`selectors.lineage.evidence_roots` → `blast_radius`) reaches the snapshot and its
decision; the correction completes and marks the snapshot tainted (`SnapshotTaint`, which
stops it authorising a commit); replaying the snapshot under today's corrections no longer
reproduces it.
"""

from __future__ import annotations

from lineage_app.selectors.blast import blast_radius
from reconcile_app.choices import CorrectionStatus
from reconcile_app.models import DecisionReceipt, SnapshotTaint
from reconcile_app.selectors.lineage import evidence_roots
from reconcile_app.services.corrections import correction_create
from reconcile_app.services.release_gates.scratch import (
    scratch_estate,
    scratch_principal,
    scratch_snapshot,
    traced_field,
)
from reconcile_app.services.release_gates.world import Finding, World
from reconcile_app.services.replay import snapshot_replay


def correction_trace(world: World) -> Finding:
    field = traced_field(world)
    with scratch_estate():
        principal = scratch_principal()
        issued = scratch_snapshot(world, principal)
        snapshot = issued.snapshot
        decision_id = DecisionReceipt.objects.get(snapshot=snapshot).decision_id
        entry = issued.evidence[field]
        correction = correction_create(
            evidence_id=entry,
            reason="release gate: correction trace drill",
            actor=principal.user,
        )
        radius = blast_radius(
            evidence_roots(evidence_id=entry), kinds=["snapshot", "decision"], limit=100
        )
        reached = {f"{node['kind']}:{node['ref']}" for node in radius.nodes}
        tainted = SnapshotTaint.objects.filter(snapshot=snapshot, correction=correction).exists()
        corrected = snapshot_replay(snapshot=snapshot, mode="corrected", refold=False)
        said = (
            f"Revoking the scratch entry {entry} supporting {field} = "
            f"{issued.state.values[field]!r}"
        )
        missing = [
            node
            for node in (f"snapshot:{snapshot.snapshot_id}", f"decision:{decision_id}")
            if node not in reached
        ]
        problems = [
            *([f"its blast radius does not reach {', '.join(missing)}"] if missing else []),
            *(
                [f"the correction is {correction.status}, not complete"]
                if correction.status != CorrectionStatus.COMPLETE
                else []
            ),
            *([f"{snapshot.snapshot_id} is not marked tainted"] if not tainted else []),
            *(
                [f"replaying {snapshot.snapshot_id} under the correction still matches it"]
                if corrected.exact
                else []
            ),
        ]
        snapshot_id, count = snapshot.snapshot_id, radius.counts.get("snapshot", 0)
    if problems:
        return Finding(False, f"{said}: {'; '.join(problems)}.", 1)
    return Finding(
        True,
        f"{said} reached the scratch snapshot {snapshot_id} and its decision "
        f"({count} snapshot in the blast radius); the correction completed, tainted the "
        "snapshot, and its corrected replay differs.",
        1,
    )
