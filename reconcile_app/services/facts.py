"""Facts by rule (seed 001): the current value of a fact key is chosen by the owner's rule.

`select_current` is the seed's function, unchanged in substance: authority comes from the
owner's system (an adapter), never from a memory record; the date boundary is inclusive
through valid_until in the declared fact timezone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from fnmatch import fnmatchcase

from django.db import transaction

from reconcile_app.choices import MEMORY_IN_FORCE, EscalationStatus, ReadStatus
from reconcile_app.models import Escalation, MemoryRecord, Principal, Source
from reconcile_app.services.escalations import escalation_open_for_fact, fact_keys_held
from reconcile_app.services.quarantine import quarantined_memory_classes
from reconcile_app.sources import AuthorityResult, adapter_for

OK = "ok"
# The owner could not be asked just now (unreachable, timed out, an unusable answer): 503,
# worth retrying. No source's `fact_keys` match the key at all: there is nobody to ask, which
# retrying never changes (404 `no_authority_source` until an operator declares a source).
AUTHORITY_UNAVAILABLE = "current_authority_unavailable"
NO_AUTHORITY_SOURCE = "no_authority_source"
OWNER_MISSING = "owner_missing"
NO_CURRENT_RECORD = "no_current_record"
AUTHORITY_AMBIGUOUS = "authority_ambiguous"
MEMORY_CLASS_QUARANTINED = "memory_class_quarantined"
ESCALATING_CODES = (AUTHORITY_AMBIGUOUS, OWNER_MISSING)


@dataclass(frozen=True)
class Selection:
    code: str
    fact: MemoryRecord | None = None
    candidates: list[str] = field(default_factory=list)


def select_current(
    records: Sequence[MemoryRecord], today: date, authority: AuthorityResult | None
) -> Selection:
    everyone = [record.memory_id for record in records]
    if authority is None:
        return Selection(NO_AUTHORITY_SOURCE, candidates=everyone)
    if authority.status != ReadStatus.OK or not authority.owner or not authority.source_revision:
        return Selection(AUTHORITY_UNAVAILABLE, candidates=everyone)
    current = [record for record in records if record.status in MEMORY_IN_FORCE]
    if any(not record.owner for record in current):
        return Selection(OWNER_MISSING, candidates=[record.memory_id for record in current])
    eligible = [
        record
        for record in current
        if record.owner == authority.owner
        and record.source_revision == authority.source_revision
        and (record.valid_until is None or record.valid_until >= today)
    ]
    if len(eligible) == 1:
        return Selection(OK, fact=eligible[0], candidates=[eligible[0].memory_id])
    if not eligible:
        return Selection(NO_CURRENT_RECORD, candidates=everyone)
    return Selection(AUTHORITY_AMBIGUOUS, candidates=[record.memory_id for record in eligible])


def select_current_guarded(
    records: Sequence[MemoryRecord],
    today: date,
    authority: AuthorityResult | None,
    quarantined_classes: frozenset[str],
) -> Selection:
    """`select_current`, unless a current record of the key is in a quarantined class.

    Such a key is not answered (`memory_class_quarantined`): the class is under suspicion,
    and the rule must not quietly pick around it either.
    """
    held = [
        record.memory_id
        for record in records
        if record.status in MEMORY_IN_FORCE and record.memory_class in quarantined_classes
    ]
    if held:
        return Selection(MEMORY_CLASS_QUARANTINED, candidates=held)
    return select_current(records, today, authority)


def authority_sources() -> list[Source]:
    """Sources that answer for some fact keys, in the order the rule tries them (by name)."""
    return list(Source.objects.exclude(fact_keys=[]).order_by("name"))


def authority_source_for(fact_key: str, sources: Sequence[Source] | None = None) -> Source | None:
    """The first source (by name) whose `fact_keys` patterns match the key.

    Pass `sources` (from `authority_sources()`) to apply the rule to many keys with one query.
    """
    for source in authority_sources() if sources is None else sources:
        if any(fnmatchcase(fact_key, pattern) for pattern in source.fact_keys):
            return source
    return None


def _selection(fact_key: str, on: date, authority: AuthorityResult | None) -> Selection:
    records = list(
        MemoryRecord.objects.filter(fact_key=fact_key).select_related("agent").order_by("id")
    )
    return select_current_guarded(records, on, authority, quarantined_memory_classes())


@dataclass(frozen=True)
class FactAnswer:
    selection: Selection
    authority: AuthorityResult | None
    authority_source: str | None
    escalation: Escalation | None


def fact_current(
    *, fact_key: str, on: date, requested_by: Principal | None, opens_escalation: bool = True
) -> FactAnswer:
    """The key's current record by its owner's rule. An ambiguity opens the key's escalation
    when `opens_escalation` (an agent about to rely on it); a person's read only names the one
    already open (an auditor's look changes nothing, and freezes no key)."""
    source = authority_source_for(fact_key)
    authority = adapter_for(source).authority(fact_key) if source is not None else None
    selection = _selection(fact_key, on, authority)
    escalation = None
    if selection.code in ESCALATING_CODES and not opens_escalation:
        escalation = Escalation.objects.filter(
            fact_key=fact_key, status=EscalationStatus.OPEN
        ).first()
    elif selection.code in ESCALATING_CODES:
        with transaction.atomic():
            # The freeze holds the key's writes off and weighs the records again: one that
            # landed after the first read would be left out of the candidates, written to a
            # key frozen without it.
            fact_keys_held(fact_key)
            selection = _selection(fact_key, on, authority)
            if selection.code in ESCALATING_CODES:
                escalation = escalation_open_for_fact(
                    code=selection.code,
                    fact_key=fact_key,
                    candidate_refs=selection.candidates,
                    authority_owner=authority.owner if authority else "",
                    requested_by=requested_by,
                )
    return FactAnswer(
        selection=selection,
        authority=authority,
        authority_source=source.name if source else None,
        escalation=escalation,
    )
