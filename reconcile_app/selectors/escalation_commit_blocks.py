"""Which escalations on a page of the queue the gate would refuse a commit on now, and why.

A decision's approval authorises a commit only while its snapshot still does: its contract
version active, its evidence not withdrawn, no source it read quarantined
(services/effects/gate.py, services/quarantine.py). After a quarantine or a correction, a
queue of open questions resting on the withdrawn grounds would otherwise ask reviewers to
open each one to learn that approving it changes nothing. The same checks as the gate's, for
a page at once: at most four queries however many rows (and the active quarantines' read,
cached per epoch), none when no row asks a decision's question.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Q

from reconcile_app.choices import ContractStatus, EscalationStatus, ReadStatus
from reconcile_app.models import (
    DecisionSnapshot,
    Escalation,
    EvidenceEntry,
    SnapshotTaint,
    StateRead,
)
from reconcile_app.selectors.escalation_proposals import is_snapshot_question
from reconcile_app.services.quarantine import quarantines_active


@dataclass(frozen=True)
class CommitBlock:
    """The gate's refusal a commit on the escalation's snapshot would meet now."""

    code: str
    detail: str


def commit_blocks(escalations: Iterable[Escalation], now: datetime) -> dict[int, CommitBlock]:
    """Escalation pk → why its snapshot authorises nothing now, for the open ones and the
    approved ones still within their commit window (the others authorise nothing anyway)."""
    asking: dict[int, Escalation] = {
        escalation.snapshot_id: escalation
        for escalation in escalations
        if escalation.snapshot_id is not None
        and is_snapshot_question(escalation)
        and escalation.status in (EscalationStatus.OPEN, EscalationStatus.APPROVED)
    }
    if not asking:
        return {}
    rows = DecisionSnapshot.objects.filter(pk__in=asking).values_list(
        "pk",
        "issued_at",
        "decision_class",
        "contract__version",
        "contract__status",
        "contract__activated_at",
        "contract__commit_window_seconds",
        "content__evidence_manifest",
    )
    blocks: dict[int, CommitBlock] = {}
    used: dict[int, list[str]] = {}
    for pk, issued_at, decision_class, version, status, went_live, window, manifest in rows:
        escalation = asking[pk]
        decided = escalation.decided_at
        if escalation.status == EscalationStatus.APPROVED and (
            decided is None or decided + timedelta(seconds=window) < now
        ):
            continue  # its window has closed: the queue says so by its status alone
        if status != ContractStatus.ACTIVE or (went_live is not None and issued_at < went_live):
            blocks[escalation.pk] = CommitBlock(
                "contract_superseded",
                f"{decision_class}@{version} is no longer the active version",
            )
            continue
        used[pk] = [item["evidence_id"] for item in manifest or ()]
    _withdrawn(used, asking, blocks)
    _quarantined(used, asking, blocks)
    return blocks


def _withdrawn(
    used: dict[int, list[str]], asking: dict[int, Escalation], blocks: dict[int, CommitBlock]
) -> None:
    """Evidence revoked or superseded since, or a correction's taint: 409 `snapshot_tainted`."""
    if not used:
        return
    corrected: dict[int, list[str]] = {}
    for snapshot_id, correction_id in SnapshotTaint.objects.filter(
        snapshot_id__in=used
    ).values_list("snapshot_id", "correction__correction_id"):
        corrected.setdefault(snapshot_id, []).append(correction_id)
    every_used = {ref for refs in used.values() for ref in refs}
    withdrawn: set[str] = set()
    if every_used:
        for revoked, superseded in EvidenceEntry.objects.filter(
            Q(revokes__evidence_id__in=every_used) | Q(supersedes__evidence_id__in=every_used)
        ).values_list("revokes__evidence_id", "supersedes__evidence_id"):
            withdrawn.update(ref for ref in (revoked, superseded) if ref in every_used)
    for snapshot_id, refs in used.items():
        gone = sorted(set(refs) & withdrawn)
        if gone or snapshot_id in corrected:
            said = f"evidence it used was withdrawn ({', '.join(gone)})" if gone else ""
            said = said or f"corrected by {', '.join(sorted(corrected[snapshot_id]))}"
            blocks[asking[snapshot_id].pk] = CommitBlock("snapshot_tainted", said)


def _quarantined(
    used: dict[int, list[str]], asking: dict[int, Escalation], blocks: dict[int, CommitBlock]
) -> None:
    """A source whose answer informed the decision, quarantined now: 423 `source_quarantined`."""
    sources = quarantines_active().sources
    still = [pk for pk in used if asking[pk].pk not in blocks]
    if not sources or not still:
        return
    held: dict[int, set[str]] = {}
    for snapshot_id, source in StateRead.objects.filter(
        snapshot_id__in=still, status=ReadStatus.OK, source__name__in=sources
    ).values_list("snapshot_id", "source__name"):
        held.setdefault(snapshot_id, set()).add(source)
    for snapshot_id, names in held.items():
        blocks[asking[snapshot_id].pk] = CommitBlock(
            "source_quarantined", f"{', '.join(sorted(names))} quarantined since it was read"
        )
