"""Whether snapshots still stand: the gate's checks on what a decision's authority rests on,
for the one snapshot a commit names or for a page of them at once.

A snapshot authorises a commit only while its contract version is the active one, no
evidence it used has been withdrawn, and no source whose answer informed it is quarantined.
The gate asks for the snapshot a commit names (gate.py, commit.py); the escalation queue
asks for a page of questions, to mark those an approval could no longer help
(selectors/escalation_commit_blocks.py); an escalation's page asks for its own. One set of
rules for all of them: a check added here holds everywhere a snapshot's standing is shown or
enforced. Each check answers the refusal the gate raises, so what a reviewer is shown is what
the agent would be told.

For many snapshots: the contract check reads nothing, the evidence check two queries
however many snapshots, the quarantine check none unless a source they read is quarantined
(the active quarantines are cached per epoch), then two.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Q

from reconcile_app.choices import ContractStatus, ReadStatus
from reconcile_app.errors import Conflict, DomainError, Locked
from reconcile_app.models import DecisionSnapshot, EvidenceEntry, SnapshotTaint, StateRead
from reconcile_app.services.quarantine import quarantines_active, source_quarantined_errors

# How many withdrawing entries a refusal names; the rest are in the snapshot's lineage.
WITHDRAWN_SHOWN = 20


@dataclass(frozen=True)
class Grounds:
    """What a snapshot's authority rests on, as its standing is checked."""

    snapshot_id: int
    issued_at: datetime
    decision_class: str
    version: str
    contract_status: str
    went_live: datetime | None  # when the contract version's current period began
    evidence_used: tuple[str, ...]
    # The sources of its `ok` reads (only those informed the decision; policy sees no
    # other); None: read from its state reads, and only if some source is quarantined.
    sources_read: frozenset[str] | None = None

    @classmethod
    def of(cls, snapshot: DecisionSnapshot) -> Grounds:
        """From a loaded snapshot and its contract: nothing read."""
        content = snapshot.content
        return cls(
            snapshot_id=snapshot.pk,
            issued_at=snapshot.issued_at,
            decision_class=snapshot.decision_class,
            version=snapshot.contract.version,
            contract_status=snapshot.contract.status,
            went_live=snapshot.contract.activated_at,
            evidence_used=tuple(item["evidence_id"] for item in content["evidence_manifest"]),
            sources_read=sources_informing(content["fields"]),
        )


def sources_informing(fields: Mapping[str, Mapping[str, Any]]) -> frozenset[str]:
    return frozenset(read["source"] for read in fields.values() if read.get("status") == "ok")


def superseded(grounds: Grounds) -> Conflict | None:
    """409 `contract_superseded` once the snapshot's contract version is not the active one.

    Issued before the version's current period began: under a rollback that came back to
    it, what was decided before the other version went live does not authorise again.
    """
    if grounds.contract_status == ContractStatus.ACTIVE and (
        grounds.went_live is None or grounds.issued_at >= grounds.went_live
    ):
        return None
    return Conflict(
        f"{grounds.decision_class}@{grounds.version} is no longer the active version: "
        "reconcile again under the active one",
        code="contract_superseded",
        decision_class=grounds.decision_class,
        version=grounds.version,
    )


def withdrawn(grounds: Sequence[Grounds]) -> dict[int, Conflict]:
    """Snapshot id → 409 `snapshot_tainted`, for each whose evidence was revoked or
    superseded since (a correction, or an entry superseding it) or that a correction
    tainted: `withdrawn` names the evidence it used that was withdrawn, `withdrawn_by` the
    entries that withdrew it, `corrections` the corrections."""
    if not grounds:
        return {}
    corrected: dict[int, list[str]] = {}
    for snapshot_id, correction_id in SnapshotTaint.objects.filter(
        snapshot_id__in=[item.snapshot_id for item in grounds]
    ).values_list("snapshot_id", "correction__correction_id"):
        corrected.setdefault(snapshot_id, []).append(correction_id)
    every_used = {ref for item in grounds for ref in item.evidence_used}
    withdrawing: dict[str, list[str]] = {}  # evidence used → the entries withdrawing it
    if every_used:
        for entry, revoked, superseded_id in EvidenceEntry.objects.filter(
            Q(revokes__evidence_id__in=every_used) | Q(supersedes__evidence_id__in=every_used)
        ).values_list("evidence_id", "revokes__evidence_id", "supersedes__evidence_id"):
            for used in {revoked, superseded_id} & every_used:
                withdrawing.setdefault(used, []).append(entry)
    refusals: dict[int, Conflict] = {}
    for item in grounds:
        gone = sorted(set(item.evidence_used) & withdrawing.keys())
        corrections = corrected.get(item.snapshot_id, [])
        if gone or corrections:
            by = sorted({entry for used in gone for entry in withdrawing[used]})
            refusals[item.snapshot_id] = Conflict(
                "evidence this snapshot relied on was revoked or superseded since it was "
                "issued: reconcile again",
                code="snapshot_tainted",
                withdrawn=gone,
                withdrawn_by=by[:WITHDRAWN_SHOWN],
                corrections=corrections,
            )
    return refusals


def quarantined(grounds: Sequence[Grounds]) -> dict[int, Locked]:
    """Snapshot id → 423 `source_quarantined`, for each that read a source quarantined now.

    Quarantining a source says its answers cannot be trusted: a decision made on one a
    minute earlier stops authorising, as one on revoked evidence does. A read that was not
    `ok` (already quarantined, unavailable, stale) informed nothing and holds nothing up.
    """
    held = quarantines_active().sources
    if not held or not grounds:
        return {}
    overlapping = {
        item.snapshot_id: sorted(item.sources_read & held)
        for item in grounds
        if item.sources_read is not None
    }
    unknown = [item.snapshot_id for item in grounds if item.sources_read is None]
    if unknown:
        for snapshot_id, source in StateRead.objects.filter(
            snapshot_id__in=unknown, status=ReadStatus.OK, source__name__in=held
        ).values_list("snapshot_id", "source__name"):
            overlapping.setdefault(snapshot_id, []).append(source)
    errors = source_quarantined_errors({name for names in overlapping.values() for name in names})
    refused: dict[int, Locked] = {}
    for snapshot_id, names in overlapping.items():
        names.sort()
        # The first still in force: one may have been lifted since the cached set was read.
        source = next((name for name in names if name in errors), None)
        if source is not None:
            refused[snapshot_id] = errors[source]
    return refused


def refusals(grounds: Iterable[Grounds]) -> dict[int, DomainError]:
    """Snapshot id → the first refusal a commit on it meets now, in the gate's order: its
    contract, its evidence, the sources it read."""
    found: dict[int, DomainError] = {}
    standing: list[Grounds] = []
    for item in grounds:
        refusal = superseded(item)
        if refusal is not None:
            found[item.snapshot_id] = refusal
        else:
            standing.append(item)
    found.update(withdrawn(standing))
    found.update(quarantined([item for item in standing if item.snapshot_id not in found]))
    return found
