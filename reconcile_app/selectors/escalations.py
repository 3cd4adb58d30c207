"""Reads of escalations: scoped for the API (docs/api.md "Who reads what"), the console's queue
and its detail page.

People in a role read every escalation. An agent reads those bound to its own snapshots or
effects, those it raised, those of the fact keys it has written, and every fact key's own
escalation (an ambiguity, a missing owner): `facts/{key}/current` names that one to any agent
that asks, which then waits on it. Any other is not there (404).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Case, Count, IntegerField, Q, QuerySet, Value, When

from reconcile_app.choices import EscalationStatus
from reconcile_app.errors import NotFound
from reconcile_app.models import Escalation, MemoryRecord
from reconcile_app.roles import is_staff_role
from reconcile_app.selectors.escalation_proposals import (
    SnapshotProposal,
    is_snapshot_question,
    snapshot_proposal,
)
from reconcile_app.services.escalations import record_keepable


def escalations_visible_to(user: Any) -> QuerySet[Escalation]:
    # A row names its snapshot by id: the content (kilobytes a snapshot) is never read here.
    escalations = Escalation.objects.select_related(
        "snapshot", "effect", "memory", "requested_by", "decided_by"
    ).defer("snapshot__content")
    if is_staff_role(user):
        return escalations
    written_keys = (
        MemoryRecord.objects.filter(agent__user=user).exclude(fact_key="").values("fact_key")
    )
    return escalations.filter(
        Q(snapshot__principal__user=user)
        | Q(effect__principal__user=user)
        | Q(requested_by__user=user)
        | Q(fact_key__in=written_keys)
        | (Q(snapshot__isnull=True, effect__isnull=True, memory__isnull=True) & ~Q(fact_key=""))
    )


def escalation_get(*, user: Any, escalation_id: str) -> Escalation:
    escalation = escalations_visible_to(user).filter(escalation_id=escalation_id).first()
    if escalation is None:
        raise NotFound(f"no escalation {escalation_id}", code="escalation_not_found")
    return escalation


ESCALATION_TABS: tuple[str, ...] = ("open", "approved", "rejected", "all")


def console_escalations() -> QuerySet[Escalation]:
    """Escalations with what they are about; the snapshot's big `content` is not read."""
    return Escalation.objects.select_related(
        "snapshot", "effect", "memory", "requested_by", "decided_by"
    ).defer("snapshot__content")


def escalation_queue_order(queryset: QuerySet[Escalation], tab: str) -> QuerySet[Escalation]:
    """The order a reviewer works in: what has waited longest first.

    Decided tabs show the latest decisions first; "all" puts the open queue first.
    """
    if tab in (EscalationStatus.APPROVED, EscalationStatus.REJECTED):
        return queryset.order_by("-decided_at", "-id")
    if tab == "all":
        waiting = Case(
            When(status=EscalationStatus.OPEN, then=Value(0)),
            default=Value(1),
            output_field=IntegerField(),
        )
        return queryset.annotate(waiting=waiting).order_by("waiting", "opened_at", "id")
    return queryset.order_by("opened_at", "id")


def escalation_status_counts(queryset: QuerySet[Escalation]) -> dict[str, int]:
    """Open, approved, rejected and all, in one aggregate over the already-filtered rows."""
    counts = queryset.order_by().aggregate(
        all=Count("pk"),
        **{
            str(status): Count("pk", filter=Q(status=status))
            for status in (
                EscalationStatus.OPEN,
                EscalationStatus.APPROVED,
                EscalationStatus.REJECTED,
            )
        },
    )
    return {key: value or 0 for key, value in counts.items()}


def escalation_suggestions() -> dict[str, list[str]]:
    """Known owners and codes for the filter form, from one query over distinct pairs."""
    pairs = list(Escalation.objects.order_by().values_list("owner", "code").distinct())
    return {
        "owners": sorted({owner for owner, _ in pairs}),
        "codes": sorted({code for _, code in pairs}),
    }


@dataclass(frozen=True)
class Candidate:
    """One candidate of a fact escalation: its ref and the record it names (None if gone)."""

    ref: str
    record: MemoryRecord | None
    # Approving may keep it (services/escalations.record_keepable).
    keepable: bool = True


@dataclass(frozen=True)
class ComparisonRow:
    """One attribute across every candidate; `differs` marks where a reviewer should look."""

    label: str
    kind: str  # how the template shows it: value, text, mono, date, time, status, refs
    values: list[Any]
    differs: bool


# (label, kind, how to read it from a record) — the seed's fields, in the order compared.
COMPARED: tuple[tuple[str, str, Any], ...] = (
    ("Value", "value", lambda record: record.value),
    ("Owner", "text", lambda record: record.owner),
    ("Source revision", "mono", lambda record: record.source_revision),
    ("Valid until", "date", lambda record: record.valid_until),
    ("Status", "status", lambda record: record.status),
    ("Derived from", "refs", lambda record: list(record.derived_from)),
    ("Supersedes", "mono", lambda record: record.supersedes.memory_id if record.supersedes else ""),
    ("Written at", "time", lambda record: record.written_at),
    ("Agent", "text", lambda record: record.agent.name),
)


@dataclass(frozen=True)
class EscalationDetail:
    escalation: Escalation
    # Fact escalations only: one column per candidate record, in the escalation's order.
    candidates: list[Candidate]
    # Other escalations list refs (a snapshot id, evidence ids, an effect key) as they are.
    refs: list[str]
    # A snapshot's own escalation: what was proposed and what deciding it does.
    proposal: SnapshotProposal | None = None

    @property
    def is_fact(self) -> bool:
        return bool(self.escalation.fact_key)

    @property
    def comparison(self) -> list[ComparisonRow]:
        rows = []
        for label, kind, read in COMPARED:
            values = [
                read(candidate.record) if candidate.record is not None else None
                for candidate in self.candidates
            ]
            present = [value for value in values if value is not None]
            differs = len(present) > 1 and any(value != present[0] for value in present)
            rows.append(ComparisonRow(label=label, kind=kind, values=values, differs=differs))
        return rows

    def written_by(self, user: object) -> set[str]:
        """The candidates `user` wrote: they may never select one of them."""
        return {
            candidate.ref
            for candidate in self.candidates
            if candidate.record is not None
            and candidate.record.agent.user_id == getattr(user, "pk", None)
        }

    def raised_by(self, user: object) -> bool:
        """True when `user` raised it: they may read it but never decide it."""
        requested_by = self.escalation.requested_by
        return requested_by is not None and requested_by.user_id == getattr(user, "pk", None)


def console_escalation_detail(*, escalation_id: str) -> EscalationDetail:
    """One escalation and its candidate records: two queries, however many candidates."""
    escalation = console_escalations().filter(escalation_id=escalation_id).first()
    if escalation is None:
        raise NotFound(f"no escalation {escalation_id}", code="escalation_not_found")
    refs = [str(ref) for ref in escalation.candidate_refs]
    if is_snapshot_question(escalation):
        return EscalationDetail(
            escalation=escalation,
            candidates=[],
            refs=refs,
            proposal=snapshot_proposal(escalation),
        )
    if not escalation.fact_key:
        return EscalationDetail(escalation=escalation, candidates=[], refs=refs)
    records = {
        record.memory_id: record
        for record in MemoryRecord.objects.filter(memory_id__in=refs).select_related(
            "agent", "supersedes"
        )
    }
    return EscalationDetail(
        escalation=escalation,
        candidates=[
            Candidate(
                ref=ref,
                record=records.get(ref),
                keepable=record_keepable(records.get(ref), escalation.code),
            )
            for ref in refs
        ],
        refs=refs,
    )
