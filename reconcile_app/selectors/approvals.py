"""Which escalation decides an `escalate` snapshot, and what its approval authorises."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Q

from reconcile_app.canonical import canonical_json
from reconcile_app.choices import DecisionResult, EscalationStatus
from reconcile_app.models import Contradiction, DecisionSnapshot, Escalation, EvidenceEntry

# Where a snapshot just issued carries the rows written with it (services/snapshots.py).
_ISSUED_RELATIONS = "_issued_relations"


@dataclass(frozen=True)
class SnapshotRelations:
    """What a snapshot's representation and approval read of its relations."""

    contradictions_seen: list[Contradiction]  # by id
    escalations: list[Escalation]  # the ones it opened, then the one its retry joined
    tainted_by: list[str]  # correction ids


def relations_issued(snapshot: DecisionSnapshot, relations: SnapshotRelations) -> None:
    """Attach the relations written with a snapshot just issued: representing it then reads
    nothing, without building the related managers' querysets (a filtered clone each, most
    of what representing a new snapshot cost)."""
    snapshot.__dict__[_ISSUED_RELATIONS] = relations


def snapshot_relations(snapshot: DecisionSnapshot) -> SnapshotRelations:
    """The relations attached when the snapshot was issued, else its related managers' (the
    prefetched rows when the caller prefetched them, as selectors/snapshots.py does)."""
    issued = _issued(snapshot)
    if issued is not None:
        return issued
    return SnapshotRelations(
        contradictions_seen=sorted(snapshot.contradictions_seen.all(), key=lambda row: row.pk),
        escalations=_escalations(snapshot),
        tainted_by=[taint.correction.correction_id for taint in snapshot.taints.all()],
    )


def _issued(snapshot: DecisionSnapshot) -> SnapshotRelations | None:
    relations: SnapshotRelations | None = snapshot.__dict__.get(_ISSUED_RELATIONS)
    return relations


def _escalations(snapshot: DecisionSnapshot) -> list[Escalation]:
    return [*snapshot.escalations.all(), *snapshot.joined_escalations.all()]


def snapshot_approval(
    snapshot: DecisionSnapshot, relations: SnapshotRelations | None = None
) -> Escalation | None:
    """The escalation the snapshot opened, or the open one its retry joined.

    An operator's escalation of an effect also names the effect's snapshot, and a promotion
    names a memory: those are other questions, never an approval of the snapshot.
    """
    known = relations or _issued(snapshot)
    # Only the escalations are read otherwise: the effect gate asks this of a snapshot it
    # loaded without its other relations.
    for escalation in known.escalations if known is not None else _escalations(snapshot):
        if escalation.effect_id is None and escalation.memory_id is None:
            return escalation
    return None


def approved_window_start(
    snapshot: DecisionSnapshot, approval: Escalation | None
) -> datetime | None:
    """When an approved `escalate` snapshot's commit window opened (None: it authorises
    nothing); `approval` is the snapshot's (`snapshot_approval`)."""
    if snapshot.content["decision"]["result"] != DecisionResult.ESCALATE:
        return None
    if approval is None or approval.status != EscalationStatus.APPROVED:
        return None
    return approval.decided_at


@dataclass(frozen=True)
class UnseenState:
    """A read of a joined snapshot that the approved snapshot, the reviewer's page, did not
    show: `seen` and `found` are versions for the action's field, values for the others."""

    field: str
    seen: Any
    found: Any
    approved_snapshot_id: str


def unseen_state(
    snapshot: DecisionSnapshot, approval: Escalation, field: str
) -> UnseenState | None:
    """What keeps an approved escalation from authorising `snapshot` to act on `field`;
    None when it authorises.

    Its own snapshot is authorised; a snapshot that joined it (a retry, before the decision
    or after it, learning the outcome) only at the state the reviewer saw: the version the
    escalation's own snapshot read of that field, and what policy decided on in every other
    field (its value, and whether it was read at all). The reviewer's page shows that
    snapshot's reads, so one approval must not authorise a commit at a state reached while
    the question was open, nor at every state reached while its window is open. A retry
    raising the same question may have read other values (the same rule fired on them), so
    joining alone says nothing about the values."""
    if snapshot.pk == approval.snapshot_id or approval.decided_at is None:
        return None
    approved = approval.snapshot
    if approved is None:
        return None  # not a snapshot's question (a promotion's): nothing to compare
    seen_fields = approved.content["fields"]
    found_fields = snapshot.content["fields"]
    seen = seen_fields.get(field, {}).get("version")
    found = found_fields.get(field, {}).get("version")
    if found != seen:
        return UnseenState(field, seen, found, approved.snapshot_id)
    for name in sorted(set(seen_fields) | set(found_fields)):
        seen_read, found_read = seen_fields.get(name, {}), found_fields.get(name, {})
        if _as_policy_saw(seen_read) != _as_policy_saw(found_read):
            return UnseenState(
                name, seen_read.get("value"), found_read.get("value"), approved.snapshot_id
            )
    return None


def _as_policy_saw(read: dict[str, Any]) -> tuple[Any, ...]:
    # Policy sees a field's value only when it was read `ok`; otherwise its absence.
    if read.get("status") != "ok":
        return (read.get("status"),)
    return ("ok", canonical_json(read.get("value")))


def commit_deadline(snapshot: DecisionSnapshot, opened_at: datetime) -> datetime:
    return opened_at + timedelta(seconds=snapshot.contract.commit_window_seconds)


def escalation_approver(escalation: Escalation) -> str:
    return escalation.decided_by.username if escalation.decided_by is not None else ""


def evidence_attested_by(reviewer: Any, escalation: Escalation) -> list[str]:
    """The evidence an escalation rests on that `reviewer` recorded: for a decision, the
    entries supporting the reads of its snapshot and of the retries joined so far; for a
    suggested memory's promotion, the entries it was derived from. An operator may attest
    any source; approving on such an entry, one person would vouch for the grounds and
    approve what rests on them (the four eyes would be two). At most two queries; none for a
    fact key's or an effect's question."""
    if escalation.memory is not None:
        used = set(escalation.memory.derived_from)
    elif escalation.snapshot_id is None or escalation.effect_id:
        return []
    else:
        used = {
            evidence_id
            for content in DecisionSnapshot.objects.filter(
                Q(pk=escalation.snapshot_id) | Q(joined_escalations=escalation)
            ).values_list("content", flat=True)
            for read in content["fields"].values()
            for evidence_id in read.get("evidence") or ()
        }
    return evidence_recorded_by(reviewer, used)


def evidence_recorded_by(reviewer: Any, evidence_ids: set[str]) -> list[str]:
    """Which of `evidence_ids` `reviewer` recorded, sorted: one query, none for no ids."""
    if not evidence_ids:
        return []
    return sorted(
        EvidenceEntry.objects.filter(
            evidence_id__in=evidence_ids, recorded_by__user_id=reviewer.pk
        ).values_list("evidence_id", flat=True)
    )
