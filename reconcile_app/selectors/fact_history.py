"""What was believed about a fact key at a recorded time (seed 001: "what did we believe last
week?"): the records known then, the status each had then, and the owner's authority then.

A record is known at T when it was recorded at or before T; its status at T is its last
MemoryStatusEvent at or before T (admission writes the first at the record's `recorded_at`,
and migration 0014 backfilled one for every older record). The seed's `select_current` runs
unchanged over copies of the records that carry the status they had then: the rule is not
forked for history, only its input is.

An `as_of` question is history, not a live ambiguity: it never opens an escalation and never
writes anything.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from zoneinfo import ZoneInfo

from django.conf import settings

from reconcile_app.choices import MEMORY_IN_FORCE
from reconcile_app.models import MemoryRecord, MemoryStatusEvent, Source
from reconcile_app.services.facts import (
    OK,
    Selection,
    authority_source_for,
    select_current,
    select_current_guarded,
)
from reconcile_app.services.memory import fact_today
from reconcile_app.services.quarantine import quarantined_memory_classes
from reconcile_app.sources import AuthorityResult, adapter_for, authority_asked


def fact_day(moment: datetime | None = None) -> date:
    """The date of `moment` (default: now) in the declared fact timezone, in which
    valid_until is inclusive: the date an `as_of` question applies the rule on by default."""
    if moment is None:
        return fact_today()
    return moment.astimezone(ZoneInfo(settings.RECONCILE_FACT_TIMEZONE)).date()


def statuses_at(*, memory_pks: Iterable[int], at: datetime) -> dict[int, str]:
    """Each record's status at `at` (a record with none by then is left out): one query.

    Of a record's events stamped by then, the last *written* wins, not the latest stamped:
    each stamp is its host's clock, and a move made from a host running behind (a
    supersession, an expiry sweep on a worker) can be stamped before the record's admission
    on a host running ahead. Ordered by stamp, the admission came last and the retired record
    stayed current in every answer after, beside its successor (`authority_ambiguous`, where
    the present says the successor). A record's events are written in the order its moves
    happened (each under the record's row lock), so their ids are that order.
    """
    statuses: dict[int, str] = {}
    events = (
        MemoryStatusEvent.objects.filter(memory_id__in=list(memory_pks), at__lte=at)
        .order_by("memory_id", "id")
        .values_list("memory_id", "status")
    )
    for memory_pk, status in events:
        statuses[memory_pk] = status  # in the order written: the last one wins
    return statuses


def records_as_recorded(
    records: Sequence[MemoryRecord], *, at: datetime, statuses: dict[int, str]
) -> list[MemoryRecord]:
    """The records known at `at`, in their given order, each a copy with its status then.

    Copies, so the rows loaded for the present are never altered (and never saved).
    """
    believed = []
    for record in records:
        if record.recorded_at > at or record.pk not in statuses:
            continue
        then = copy.copy(record)
        then.status = statuses[record.pk]
        believed.append(then)
    return believed


def authority_at(source: Source | None, fact_key: str, as_of: datetime) -> AuthorityResult | None:
    """The owner's authority for the key as it recorded it at `as_of` (None: no source)."""
    if source is None:
        return None
    return authority_asked(adapter_for(source), fact_key, as_of)


@dataclass(frozen=True)
class FactBelieved:
    """`select_current` over what was recorded by `as_of`, on the date `on`."""

    fact_key: str
    on: date
    as_of: datetime
    selection: Selection
    authority: AuthorityResult | None
    authority_source: str | None
    # Every record known then (copies with their status then), in id order.
    records: list[MemoryRecord]
    # Classes under quarantine today among the records in force then (see fact_believed).
    quarantined_classes: list[str]

    @property
    def code(self) -> str:
        return self.selection.code

    @property
    def ok(self) -> bool:
        return self.selection.code == OK

    @property
    def statuses(self) -> dict[str, str]:
        """memory_id → its status then."""
        return {record.memory_id: record.status for record in self.records}


def fact_believed(
    *,
    fact_key: str,
    on: date,
    as_of: datetime,
    records: Sequence[MemoryRecord] | None = None,
    source: Source | None = None,
    quarantine_applies: bool = True,
) -> FactBelieved:
    """The key's selection as it was knowable at `as_of`: four queries and one owner call.

    A caller that already loaded the key's records (every one, any order) and its authority
    source passes both (`source` None: no source answers for the key); otherwise both are
    loaded here. Quarantine is a present-day control on what agents may act on,
    so with `quarantine_applies` (agents) a record in force then in a class quarantined now
    still answers `memory_class_quarantined`: without it an agent could read around a
    quarantine by asking about a second ago. People reading history (auditors, operators)
    pass False and get the answer with the quarantined classes named beside it.
    """
    if records is None:
        records = list(MemoryRecord.objects.filter(fact_key=fact_key).select_related("agent"))
        source = authority_source_for(fact_key)
    ordered = sorted(records, key=lambda record: record.pk)
    believed = records_as_recorded(
        ordered, at=as_of, statuses=statuses_at(memory_pks=[r.pk for r in ordered], at=as_of)
    )
    authority = authority_at(source, fact_key, as_of)
    quarantined = quarantined_memory_classes()
    if quarantine_applies:
        selection = select_current_guarded(believed, on, authority, quarantined)
    else:
        selection = select_current(believed, on, authority)
    return FactBelieved(
        fact_key=fact_key,
        on=on,
        as_of=as_of,
        selection=selection,
        authority=authority,
        authority_source=source.name if source is not None else None,
        records=believed,
        quarantined_classes=sorted(
            {
                record.memory_class
                for record in believed
                if record.status in MEMORY_IN_FORCE and record.memory_class in quarantined
            }
        ),
    )
