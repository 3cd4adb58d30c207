"""Which escalations on a page of the queue the gate would refuse a commit on now, and why.

A decision's approval authorises a commit only while its snapshot still stands: its contract
version active, its evidence not withdrawn, no source it read quarantined. After a
quarantine or a correction, a queue of open questions resting on the withdrawn grounds
would otherwise ask reviewers to open each one to learn that approving it changes nothing.
The gate's own checks (services/effects/standing.py) for a page at once: at most five
queries however many rows (the fifth, whether a quarantine a row read is still in force,
only when one is; and the active quarantines' read, cached per epoch), none when no row
asks a decision's question.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from reconcile_app.choices import EscalationStatus
from reconcile_app.errors import DomainError
from reconcile_app.models import DecisionSnapshot, Escalation
from reconcile_app.selectors.escalation_proposals import is_snapshot_question
from reconcile_app.services.effects.standing import Grounds, refusals


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
    grounds: list[Grounds] = []
    for pk, issued_at, decision_class, version, status, went_live, window, manifest in rows:
        decided = asking[pk].decided_at
        if asking[pk].status == EscalationStatus.APPROVED and (
            decided is None or decided + timedelta(seconds=window) < now
        ):
            continue  # its window has closed: the queue says so by its status alone
        grounds.append(
            Grounds(
                snapshot_id=pk,
                issued_at=issued_at,
                decision_class=decision_class,
                version=version,
                contract_status=status,
                went_live=went_live,
                evidence_used=tuple(item["evidence_id"] for item in manifest or ()),
            )
        )
    return {
        asking[snapshot_id].pk: CommitBlock(refusal.code, _why(refusal))
        for snapshot_id, refusal in refusals(grounds).items()
    }


def _why(refusal: DomainError) -> str:
    """The refusal in a reviewer's words: what was withdrawn, not what the agent must do."""
    said = refusal.extra
    if refusal.code == "snapshot_tainted":
        if said["withdrawn"]:
            return f"evidence it used was withdrawn ({', '.join(said['withdrawn'])})"
        return f"corrected by {', '.join(sorted(said['corrections']))}"
    if refusal.code == "source_quarantined":
        return f"{said['source']} quarantined since it was read"
    if refusal.code == "contract_superseded":
        return f"{said['decision_class']}@{said['version']} is no longer the active version"
    return refusal.detail
