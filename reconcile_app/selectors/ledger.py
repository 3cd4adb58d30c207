"""Reads of the evidence ledger and of memories: scoped to who asks (docs/api.md "Who reads what"),
and the support a decision rests on (what the ledger said about a subject by a cut-off).

People in a role read everything; an agent reads the evidence it attested and its own
memories. Another principal's entry is simply not there (404), so ids cannot be probed.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

from django.db.models import Exists, OuterRef, Q, QuerySet, Subquery, Value

from config import raw_select
from reconcile_app.choices import PROMOTION, EvidenceKind
from reconcile_app.errors import NotFound
from reconcile_app.models import (
    Escalation,
    EvidenceEntry,
    EvidenceSupport,
    LedgerHead,
    MemoryRecord,
)
from reconcile_app.reconciliation.types import EvidenceView
from reconcile_app.roles import is_staff_role

STATE_ASSERTING_KINDS = (
    EvidenceKind.OBSERVATION,
    EvidenceKind.DOCUMENT,
    EvidenceKind.CORRECTION,
    EvidenceKind.EFFECT_RECEIPT,
    EvidenceKind.READBACK,
)


# An entry's columns as `_asserting_view` reads them, before `withdrawn` and `revokes`.
ENTRY_VIEW_COLUMNS = (
    "evidence_id",
    "hash",
    "subject",
    "field",
    "kind",
    "value",
    "source",
    "observed_at",
    "recorded_at",
)


def evidence_visible_to(user: Any) -> QuerySet[EvidenceEntry]:
    entries = EvidenceEntry.objects.select_related("revokes", "supersedes", "recorded_by")
    if is_staff_role(user):
        return entries
    return entries.filter(recorded_by__user=user)


def evidence_get(*, user: Any, evidence_id: str) -> EvidenceEntry:
    entry = evidence_visible_to(user).filter(evidence_id=evidence_id).first()
    if entry is None:
        raise NotFound(f"no evidence {evidence_id}", code="evidence_not_found")
    return entry


def memories_visible_to(user: Any) -> QuerySet[MemoryRecord]:
    memories = MemoryRecord.objects.select_related("agent", "supersedes")
    if is_staff_role(user):
        return memories
    return memories.filter(agent__user=user)


def _promotions_of(memory: Any) -> QuerySet[Escalation]:
    return Escalation.objects.filter(memory=memory, code=PROMOTION).order_by("opened_at", "id")


def memories_with_promotion(memories: QuerySet[MemoryRecord]) -> QuerySet[MemoryRecord]:
    """Each memory with `promotion_escalation_id`: the escalation that reviews it (None for
    a memory admitted directly), as a subquery, so a page of memories stays one query."""
    return memories.annotate(
        promotion_escalation_id=Subquery(_promotions_of(OuterRef("pk")).values("escalation_id")[:1])
    )


def promotion_escalation_id(record: MemoryRecord) -> str | None:
    """The annotation when the record came through `memories_with_promotion`, else one query
    (a record just admitted, a fact selected by rule)."""
    if "promotion_escalation_id" in record.__dict__:
        return record.__dict__["promotion_escalation_id"]
    return _promotions_of(record).values_list("escalation_id", flat=True).first()


def memory_get(*, user: Any, memory_id: str) -> MemoryRecord:
    record = memories_with_promotion(memories_visible_to(user)).filter(memory_id=memory_id).first()
    if record is None:
        raise NotFound(f"no memory {memory_id}", code="memory_not_found")
    return record


def asserted_value(kind: str, value: Any, revokes: bool = False) -> tuple[bool, Any]:
    """What value of the field an entry vouches for, if any.

    Observations, documents and corrections state a value. A receipt vouches for the value
    its effect produced, a readback for the value it found. Model proposals and tool requests
    say nothing about the world: they never support or contradict state.
    """
    if kind == EvidenceKind.CORRECTION:
        # A revocation withdraws an entry; only a replacement states a value.
        return not revokes, value
    if kind in (EvidenceKind.OBSERVATION, EvidenceKind.DOCUMENT):
        return True, value
    if kind == EvidenceKind.EFFECT_RECEIPT and isinstance(value, dict):
        return "resulting_value" in value, value.get("resulting_value")
    if kind == EvidenceKind.READBACK and isinstance(value, dict):
        return "value" in value, value.get("value")
    return False, None


def evidence_as_of(
    *,
    subject: str,
    fields: set[str],
    recorded_by: datetime,
    ledger_seq: int | None = None,
    observed_by: datetime | None = None,
    known_by: datetime | None = None,
    known_seq: int | None = None,
) -> list[EvidenceView]:
    """Evidence for the subject's fields recorded by the cut-off, with withdrawals applied.

    With `ledger_seq`, only entries up to that position of the chain count (and only
    withdrawals up to it): what a reconcile could see, although an entry further on was
    stamped earlier than its cut-off (an append stamps `recorded_at` under the chain head's
    lock and commits a moment later; a reader in that gap does not see it).

    With `observed_by`, only entries observed by then count, except (with `known_by`, up to
    `known_seq`) those already recorded by `known_by`: what a decision knew stays known, even
    an entry dated a little ahead of its clock (attestations may run 300 s ahead), which it
    relied on. An entry is then withdrawn by a correction (whenever dated) or by an entry
    that itself held by then, never by a later observation superseding it.

    One query whatever the number of claims or entries: withdrawal (a revoking or superseding
    entry recorded by the cut-off) is an EXISTS on the same table — two of them, one per
    foreign key, each answered from that key's index. One EXISTS over `revokes = id OR
    supersedes = id` cannot use either index: PostgreSQL scanned the table once per entry
    (quadratic: a 100,000-entry history took over 15 minutes).
    """
    recorded = Q(recorded_at__lte=recorded_by)
    if ledger_seq is not None:
        recorded &= Q(seq__lte=ledger_seq)
    withdrawing = recorded
    entries = EvidenceEntry.objects.filter(
        recorded, subject=subject, field__in=fields, kind__in=STATE_ASSERTING_KINDS
    )
    if observed_by is not None:
        # Two clocks: what held by the valid-time cut-off, as recorded by `recorded_by`.
        held = Q(observed_at__lte=observed_by)
        if known_by is not None:
            known = Q(recorded_at__lte=known_by)
            if known_seq is not None:
                known &= Q(seq__lte=known_seq)
            held |= known
        entries = entries.filter(held)
        # A correction withdraws an entry whenever it is dated: it says the entry was wrong.
        # A later observation that supersedes one says the value changed since: the entry
        # still held at the cut-off, and taking it away would report a change no correction
        # made.
        withdrawing &= held | Q(kind=EvidenceKind.CORRECTION)
    revoked = EvidenceEntry.objects.filter(withdrawing, revokes_id=OuterRef("pk"))
    superseded = EvidenceEntry.objects.filter(withdrawing, supersedes_id=OuterRef("pk"))
    rows = (
        entries.annotate(withdrawn=Exists(revoked) | Exists(superseded))
        .order_by("seq")
        .values_list(*ENTRY_VIEW_COLUMNS, "withdrawn", "revokes_id")
    )
    return [view for view in map(_asserting_view, rows) if view is not None]


def evidence_latest(
    *, subject: str, fields: set[str], recorded_by: datetime
) -> tuple[list[EvidenceView] | None, int]:
    """The latest unwithdrawn entry stating each value of the subject's fields, from the
    EvidenceSupport index, and the chain's position the read saw (`ledger_seq`): one query,
    however long the history. The position comes from the same statement, so it names
    exactly the entries the read could see (appends commit in chain order: they serialise on
    the head). Views are None when a row moved after `recorded_by` (an append racing this
    read): then only the ledger itself answers exactly as of the cut-off (`evidence_as_of`,
    up to that position)."""
    rows = raw_select.select(
        _support_sql(len(fields)),
        [subject, *fields],
        [None, SUPPORT_CHANGED_AT, *SUPPORT_ENTRY_FIELDS],
    )
    ledger_seq = int(rows[0][0])  # the head's derived table always yields one row
    views = []
    for _, changed_at, *entry in rows:
        if changed_at is None:
            continue  # no support row for these fields (the head's row alone)
        if changed_at > recorded_by:
            return None, ledger_seq
        if entry[0] is None:
            continue  # every entry stating this value was withdrawn
        view = _asserting_view((*entry[:9], False, entry[9]))
        if view is not None:
            views.append(view)
    return views, ledger_seq


# The entry's columns `_asserting_view` reads (bar `withdrawn`), in its order.
SUPPORT_ENTRY_COLUMNS = (*ENTRY_VIEW_COLUMNS, "revokes")
(SUPPORT_CHANGED_AT,) = raw_select.fields(EvidenceSupport, "changed_at")
HEAD_ROW = 1  # LedgerHead's single row
SUPPORT_ENTRY_FIELDS = raw_select.fields(EvidenceEntry, *SUPPORT_ENTRY_COLUMNS)


@functools.lru_cache(maxsize=64)
def _support_sql(field_count: int) -> str:
    """The chain head's position, then each support row of the subject's fields with its
    entry (none once withdrawn): the ORM's join, without building a queryset on every
    reconcile. The head is a derived table of one row (0 before the first append) that the
    support rows join, so the position is read in the same snapshot as the rows."""

    def support(name: str) -> str:
        return raw_select.column(EvidenceSupport, name, "s")

    def entry(name: str) -> str:
        return raw_select.column(EvidenceEntry, name, "e")

    def head(name: str) -> str:
        return raw_select.column(LedgerHead, name, "lh")

    placeholders = ", ".join(["%s"] * field_count) or "NULL"
    return (
        f"SELECT h.ledger_seq, {support('changed_at')}, "  # noqa: S608  # nosec B608
        f"{', '.join(map(entry, SUPPORT_ENTRY_COLUMNS))} "
        f"FROM (SELECT COALESCE(MAX({head('seq')}), 0) AS ledger_seq "
        f"FROM {raw_select.table(LedgerHead, 'lh')} "
        f"WHERE {head(LedgerHead._meta.pk.name)} = {HEAD_ROW}) h "
        f"LEFT OUTER JOIN {raw_select.table(EvidenceSupport, 's')} "
        f"ON {support('subject')} = %s AND {support('field')} IN ({placeholders}) "
        f"LEFT OUTER JOIN {raw_select.table(EvidenceEntry, 'e')} "
        f"ON {support('entry')} = {entry(EvidenceEntry._meta.pk.name)}"
    )


def evidence_cited(evidence_ids: set[str]) -> dict[str, EvidenceView]:
    """The entries decisions cite (their `evidence_manifest`), as the engine saw them: one
    query however many decisions. An entry cited was in force when it was cited."""
    rows = (
        EvidenceEntry.objects.filter(evidence_id__in=evidence_ids, kind__in=STATE_ASSERTING_KINDS)
        .annotate(withdrawn=Value(False))
        .values_list(*ENTRY_VIEW_COLUMNS, "withdrawn", "revokes_id")
    )
    views = (_asserting_view(row) for row in rows) if evidence_ids else ()
    return {view.evidence_id: view for view in views if view is not None}


def _asserting_view(row: tuple[Any, ...]) -> EvidenceView | None:
    """(evidence_id, hash, subject, field, kind, value, source, observed_at, recorded_at,
    withdrawn, revokes_id) as the engine sees it; None for an entry that asserts no value."""
    evidence_id, digest, subj, field, kind, value, source, observed, recorded, gone, revokes = row
    asserts, asserted = asserted_value(kind, value, revokes=revokes is not None)
    if not asserts:
        return None
    return EvidenceView(
        evidence_id, digest, subj, field, asserted, source, observed, recorded, gone
    )
