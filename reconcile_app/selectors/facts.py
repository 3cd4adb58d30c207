"""Reads for the console's facts pages: each fact key's current selection, and its history.

A page view must not open escalations, so this calls the seed's pure `select_current` with
the owner's authority, never `fact_current` (which opens one as a side effect of a read).
Authority always comes from the owner's system through its adapter: one call per fact key
shown, never a value remembered in a memory record.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime

from django.db.models import Count, Q, QuerySet

from reconcile_app.choices import MEMORY_IN_FORCE, EscalationStatus
from reconcile_app.errors import NotFound
from reconcile_app.models import Escalation, MemoryRecord, Source
from reconcile_app.selectors.fact_history import FactBelieved, fact_believed
from reconcile_app.services.facts import (
    OK,
    Selection,
    authority_source_for,
    authority_sources,
    select_current_guarded,
)
from reconcile_app.services.quarantine import quarantined_memory_classes
from reconcile_app.sources import AuthorityResult, adapter_for


def console_fact_keys(*, search: str = "") -> QuerySet:
    """Every distinct fact key with its record counts, as rows of dicts (one per key)."""
    records = MemoryRecord.objects.exclude(fact_key="")
    if search:
        records = records.filter(fact_key__icontains=search)
    return (
        records.values("fact_key")
        .annotate(
            records=Count("pk"),
            current=Count("pk", filter=Q(status__in=MEMORY_IN_FORCE)),
        )
        .order_by("fact_key")
    )


@dataclass(frozen=True)
class FactSelection:
    """What select_current answers for one key on one date, with the authority it asked."""

    fact_key: str
    on: date
    selection: Selection
    authority: AuthorityResult | None
    authority_source: str | None
    open_escalation: str | None

    @property
    def code(self) -> str:
        return self.selection.code

    @property
    def ok(self) -> bool:
        return self.selection.code == OK


def _select(
    fact_key: str,
    records: list[MemoryRecord],
    on: date,
    source: Source | None,
    open_escalation: str | None,
    quarantined_classes: frozenset[str],
) -> FactSelection:
    authority = adapter_for(source).authority(fact_key) if source is not None else None
    # The API's order (by id), so candidates read the same on both.
    records = sorted(records, key=lambda record: record.pk)
    return FactSelection(
        fact_key=fact_key,
        on=on,
        selection=select_current_guarded(records, on, authority, quarantined_classes),
        authority=authority,
        authority_source=source.name if source is not None else None,
        open_escalation=open_escalation,
    )


def fact_selections(*, fact_keys: Iterable[str], on: date) -> dict[str, FactSelection]:
    """The selection for each key of a page: four queries plus one owner call per key."""
    keys = list(fact_keys)
    if not keys:
        return {}
    by_key: dict[str, list[MemoryRecord]] = {key: [] for key in keys}
    for record in MemoryRecord.objects.filter(fact_key__in=keys).order_by("pk"):
        by_key[record.fact_key].append(record)
    sources = authority_sources()
    open_escalations = dict(
        Escalation.objects.filter(fact_key__in=keys, status=EscalationStatus.OPEN).values_list(
            "fact_key", "escalation_id"
        )
    )
    quarantined = quarantined_memory_classes()
    return {
        key: _select(
            key,
            by_key[key],
            on,
            authority_source_for(key, sources),
            open_escalations.get(key),
            quarantined,
        )
        for key in keys
    }


@dataclass(frozen=True)
class FactDetail:
    # The selection today, or (with as_of) as it was believed then.
    current: FactSelection | FactBelieved
    # Every record of the key, newest first: history stays readable while writes are frozen.
    history: list[MemoryRecord]
    # memory_id → the ids of the records that name it in `supersedes`.
    superseded_by: dict[str, list[str]]
    escalations: list[Escalation]

    @property
    def open_escalation(self) -> Escalation | None:
        return next(
            (item for item in self.escalations if item.status == EscalationStatus.OPEN), None
        )


def console_fact_detail(*, fact_key: str, on: date, as_of: datetime | None = None) -> FactDetail:
    """A fact key's selection on `on` and its whole history: five queries and one owner call.

    With `as_of`, the selection is the one believed then (one query more: the statuses then),
    for people: a quarantined class is named beside it, not hidden (selectors/fact_history).
    """
    history = list(
        MemoryRecord.objects.filter(fact_key=fact_key)
        .select_related("agent", "supersedes")
        .order_by("-recorded_at", "-pk")
    )
    escalations = list(
        Escalation.objects.filter(fact_key=fact_key)
        .select_related("decided_by", "requested_by")
        .order_by("-opened_at", "-pk")
    )
    if not history and not escalations:
        raise NotFound(f"no memory record has fact key {fact_key}", code="fact_key_not_found")
    superseded_by: dict[str, list[str]] = {}
    for record in history:
        if record.supersedes is not None:
            superseded_by.setdefault(record.supersedes.memory_id, []).append(record.memory_id)
    open_escalation = next(
        (item.escalation_id for item in escalations if item.status == EscalationStatus.OPEN),
        None,
    )
    source = authority_source_for(fact_key)
    current: FactSelection | FactBelieved
    if as_of is None:
        current = _select(
            fact_key, history, on, source, open_escalation, quarantined_memory_classes()
        )
    else:
        current = fact_believed(
            fact_key=fact_key,
            on=on,
            as_of=as_of,
            records=history,
            source=source,
            quarantine_applies=False,
        )
    return FactDetail(
        current=current,
        history=history,
        superseded_by=superseded_by,
        escalations=escalations,
    )
