"""What a reviewer needs to decide a snapshot escalation from its page alone.

The snapshot's own content says what was proposed, what the owner systems answered, what the
agent remembered and why policy escalated; around it, what the decision does: which action
an approval authorises, on which field and version, until when, and which retries and effects
hang on it. A fixed number of queries, however many reads, claims or retries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Case, IntegerField, Q, Value, When
from django.utils import timezone

from reconcile_app.choices import EscalationStatus
from reconcile_app.errors import DomainError
from reconcile_app.instants import stored_instant
from reconcile_app.models import (
    Contradiction,
    DecisionSnapshot,
    Effect,
    Escalation,
    EvidenceEntry,
)
from reconcile_app.services.effects.standing import Grounds, refusals


@dataclass(frozen=True)
class SupportingEntry:
    """An evidence entry a read rests on, and who recorded it (an agent, or a person)."""

    evidence_id: str
    recorded_by: str  # "" when the entry is not in the ledger (it never is: kept forever)


@dataclass(frozen=True)
class ProposalRead:
    field: str
    required: bool
    value: Any
    source: str
    version: int | None
    status: str
    observed_at: datetime | None
    max_age_seconds: int | None
    evidence: list[str]
    is_target: bool  # the field the proposed action writes
    # How old the owner's answer is as the page is drawn, and whether that is past the
    # contract's freshness limit: an approval's window counts from the approval, not from
    # the read, and only the target's version is checked again (the owner's If-Match).
    age_seconds: float | None
    older_than_limit: bool
    support: list[SupportingEntry]  # the evidence it rests on, with who recorded each


@dataclass(frozen=True)
class ProposalContradiction:
    pk: int | None
    status: str
    kind: str
    field: str
    state_value: Any
    state_source: str
    state_ref: str
    other_value: Any
    other_source: str
    other_ref: str
    detail: str


@dataclass(frozen=True)
class SnapshotProposal:
    snapshot: DecisionSnapshot
    principal: str
    proposed_action: str
    target_field: str  # "" when the contract has no such action
    binds_value: bool
    proposed_value: Any
    current: ProposalRead | None  # the target field as read
    commit_window_seconds: int
    reasons: list[dict[str, str]]
    reads: list[ProposalRead]
    claims: list[dict[str, Any]]
    contradictions: list[ProposalContradiction]
    retries: list[DecisionSnapshot] = field(default_factory=list)
    # The other questions about the same subject, open first, then the latest: at most
    # SAME_SUBJECT_SHOWN, and one more when there are more (the page links the rest).
    same_subject: list[Escalation] = field(default_factory=list)
    effects: list[Effect] = field(default_factory=list)
    deadline: datetime | None = None  # approved: the last moment a commit is accepted
    # Why the snapshot itself authorises nothing now, whatever the decision (its contract
    # version retired, its evidence withdrawn, a source it read quarantined): the gate's
    # refusal, so the page never offers an approval as a commit it would refuse.
    cannot_authorise: DomainError | None = None

    def window_open(self, now: datetime) -> bool:
        return self.deadline is not None and now <= self.deadline

    @property
    def same_subject_listed(self) -> list[Escalation]:
        return self.same_subject[:SAME_SUBJECT_SHOWN]

    @property
    def more_about_subject(self) -> bool:
        return len(self.same_subject) > SAME_SUBJECT_SHOWN

    @property
    def not_checked_again(self) -> list[ProposalRead]:
        """The reads a commit on the approval does not check again: every one but the
        action's target, whose version the owner compares (If-Match)."""
        return [read for read in self.reads if not read.is_target]

    @property
    def older_than_limit(self) -> list[ProposalRead]:
        return [read for read in self.reads if read.older_than_limit]


# How many other escalations about the subject the page lists before linking the rest.
SAME_SUBJECT_SHOWN = 10


def is_snapshot_question(escalation: Escalation) -> bool:
    """A snapshot's own escalation (an effect's or a promotion's names other things)."""
    return (
        escalation.snapshot_id is not None
        and escalation.effect_id is None
        and escalation.memory_id is None
    )


def snapshot_proposal(escalation: Escalation) -> SnapshotProposal:
    """Six queries: the snapshot with its contract, who recorded the evidence its reads rest
    on, its contradiction rows, the retries that joined, the effects the approval
    authorised, and the other escalations about its subject."""
    snapshot = DecisionSnapshot.objects.select_related("contract", "principal").get(
        pk=escalation.snapshot_id
    )
    content = snapshot.content
    binding = content["binding"]
    declared = snapshot.contract.document.get("actions", {})
    target = declared.get(snapshot.proposed_action, {}).get("field", "")
    now = timezone.now()
    recorders = _recorders(content["fields"])
    reads = [_read(name, item, target, now, recorders) for name, item in content["fields"].items()]
    window = snapshot.contract.commit_window_seconds
    deadline = None
    if escalation.status == EscalationStatus.APPROVED and escalation.decided_at is not None:
        deadline = escalation.decided_at + timedelta(seconds=window)
    return SnapshotProposal(
        snapshot=snapshot,
        principal=snapshot.principal.name,
        proposed_action=snapshot.proposed_action,
        target_field=target,
        binds_value="proposed_value" in binding,
        proposed_value=binding.get("proposed_value"),
        current=next((read for read in reads if read.is_target), None),
        commit_window_seconds=window,
        reasons=list(content["decision"]["reasons"]),
        reads=reads,
        # Written-at as a time, so the page renders it as it renders every other time.
        claims=[
            {**claim, "written_at": stored_instant(claim.get("written_at"))}
            for claim in content["claims"]
        ],
        contradictions=_contradictions(snapshot, content),
        retries=list(
            escalation.joined_snapshots.only("snapshot_id", "issued_at", "result").order_by(
                "issued_at", "id"
            )
        ),
        effects=list(
            Effect.objects.filter(escalation=escalation)
            .only("idempotency_key", "status", "action", "resulting_value", "created_at")
            .order_by("created_at", "id")
        ),
        same_subject=_same_subject(escalation, snapshot.subject),
        deadline=deadline,
        cannot_authorise=_gate_refusal(snapshot),
    )


def _same_subject(escalation: Escalation, subject: str) -> list[Escalation]:
    """What else is asked about the subject (a decision's, an effect's or a promotion's
    question): a reviewer approving one release should see the retain still open beside it."""
    waiting = Case(
        When(status=EscalationStatus.OPEN, then=Value(0)),
        default=Value(1),
        output_field=IntegerField(),
    )
    return list(
        Escalation.objects.filter(Q(snapshot__subject=subject) | Q(memory__subject=subject))
        .exclude(pk=escalation.pk)
        .select_related("snapshot")
        .only(
            "escalation_id",
            "code",
            "status",
            "opened_at",
            "decided_at",
            "effect_id",
            "memory_id",
            "snapshot__proposed_action",
        )
        .annotate(waiting=waiting)
        .order_by("waiting", "-opened_at", "-id")[: SAME_SUBJECT_SHOWN + 1]
    )


def _gate_refusal(snapshot: DecisionSnapshot) -> DomainError | None:
    return refusals([Grounds.of(snapshot)]).get(snapshot.pk)


def _recorders(fields: dict[str, Any]) -> dict[str, str]:
    """Who recorded each evidence entry the reads rest on: one query, however many."""
    used = {ref for item in fields.values() for ref in item.get("evidence") or ()}
    if not used:
        return {}
    return dict(
        EvidenceEntry.objects.filter(evidence_id__in=used).values_list(
            "evidence_id", "recorded_by__name"
        )
    )


def _read(
    name: str, item: dict[str, Any], target: str, now: datetime, recorders: dict[str, str]
) -> ProposalRead:
    observed_at = stored_instant(item.get("observed_at"))
    max_age = item.get("max_age_seconds")
    age = (now - observed_at).total_seconds() if observed_at is not None else None
    return ProposalRead(
        field=name,
        required=bool(item.get("required")),
        value=item.get("value"),
        source=item.get("source", ""),
        version=item.get("version"),
        status=item.get("status", ""),
        observed_at=observed_at,
        max_age_seconds=max_age,
        evidence=list(item.get("evidence") or []),
        is_target=name == target,
        age_seconds=age,
        support=[
            SupportingEntry(ref, recorders.get(ref) or "") for ref in item.get("evidence") or ()
        ],
        older_than_limit=age is not None and max_age is not None and age > max_age,
    )


def _contradictions(
    snapshot: DecisionSnapshot, content: dict[str, Any]
) -> list[ProposalContradiction]:
    """Both sides as the snapshot saw them, with the row's current status when it has one."""
    rows = {
        (row.kind, row.field, row.other_ref): row
        for row in Contradiction.objects.filter(seen_in=snapshot).only(
            "pk", "status", "kind", "field", "other_ref"
        )
    }
    found = []
    for item in content["contradictions"]:
        row = rows.get((item["kind"], item["field"], item["other"]["ref"]))
        found.append(
            ProposalContradiction(
                pk=row.pk if row is not None else None,
                status=row.status if row is not None else "open",
                kind=item["kind"],
                field=item["field"],
                state_value=item["state"]["value"],
                state_source=item["state"]["source"],
                state_ref=item["state"]["ref"],
                other_value=item["other"]["value"],
                other_source=item["other"]["source"],
                other_ref=item["other"]["ref"],
                detail=item.get("detail", ""),
            )
        )
    return found
