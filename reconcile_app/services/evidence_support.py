"""Keep EvidenceSupport — the latest unwithdrawn entry per (subject, field, value) — in step
with the ledger, inside the appending transaction (appends are serialised on the ledger
head, so no two appends move a row at once)."""

from __future__ import annotations

import hashlib
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from reconcile_app.canonical import canonical_json
from reconcile_app.models import EvidenceEntry, EvidenceSupport
from reconcile_app.reconciliation.support import latest_per_value
from reconcile_app.selectors.ledger import asserted_value, evidence_as_of


def value_key(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def evidence_support_note(entry: EvidenceEntry) -> None:
    """Account for a new entry: it may be the latest stating its value, and it may withdraw
    the latest stating another."""
    asserts, asserted = asserted_value(
        entry.kind, entry.value, revokes=entry.revokes_id is not None
    )
    if asserts:
        _latest_note(entry, value_key(asserted))
    for withdrawn in (entry.revokes, entry.supersedes):
        if withdrawn is not None:
            _withdraw(withdrawn, by=entry)


# The row for the entry's value is made, or moved to the entry unless the one it holds was
# observed later (ties: the greater evidence id), in one statement: the append is on every
# commit's and readback's path. An entry the row names that is gone counts as none. Ids are
# compared in code-point order, as the ledger's readers and `evidence_support_rebuild` order
# them in Python: PostgreSQL's database collation (en_US, say) would put "ev-a" before
# "ev-B"; SQLite compares text that way already.
_LATEST_NOTE = """
INSERT INTO {support} AS support
    (subject, field, value_key, entry_id, changed_at)
VALUES (%s, %s, %s, %s, %s)
ON CONFLICT (subject, field, value_key) DO UPDATE
SET entry_id = excluded.entry_id, changed_at = excluded.changed_at
WHERE NOT EXISTS (
    SELECT 1 FROM {entry} AS held
    WHERE held.id = support.entry_id
    AND (held.observed_at > %s OR (held.observed_at = %s AND held.evidence_id{collate} >= %s))
)
"""
_LATEST_NOTE_SQL = {
    vendor: _LATEST_NOTE.format(
        support=EvidenceSupport._meta.db_table,
        entry=EvidenceEntry._meta.db_table,
        collate=collate,
    )
    for vendor, collate in (("postgresql", ' COLLATE "C"'), ("sqlite", ""))
}


def _latest_note(entry: EvidenceEntry, key: str) -> None:
    adapt = connection.ops.adapt_datetimefield_value
    observed_at = adapt(entry.observed_at)
    with connection.cursor() as cursor:
        cursor.execute(
            _LATEST_NOTE_SQL[connection.vendor],
            [
                entry.subject,
                entry.field,
                key,
                entry.pk,
                adapt(entry.recorded_at),
                observed_at,
                observed_at,
                entry.evidence_id,
            ],
        )


def _withdraw(target: EvidenceEntry, *, by: EvidenceEntry) -> None:
    """`target` no longer counts: if it was the latest for its value, the one before it is."""
    asserts, asserted = asserted_value(
        target.kind, target.value, revokes=target.revokes_id is not None
    )
    if not asserts:
        return
    key = value_key(asserted)
    row = EvidenceSupport.objects.filter(
        subject=target.subject, field=target.field, value_key=key, entry=target
    ).first()
    if row is None:
        return  # not the latest: what a reader sees does not change
    # Rare (a correction of the newest entry): read the field's history once.
    remaining = [
        view
        for view in evidence_as_of(
            subject=target.subject, fields={target.field}, recorded_by=by.recorded_at
        )
        if not view.withdrawn and value_key(view.value) == key
    ]
    latest = max(remaining, key=lambda view: (view.observed_at, view.evidence_id), default=None)
    row.entry = (
        EvidenceEntry.objects.get(evidence_id=latest.evidence_id) if latest is not None else None
    )
    row.changed_at = by.recorded_at
    row.save(update_fields=["entry", "changed_at"])


def evidence_support_rebuild(*, subject: str) -> int:
    """Rebuild the subject's rows from its ledger history (after a bulk import that did not go
    through `evidence_append`); returns the rows written. Readers with an earlier cut-off
    read the ledger itself, as after migration 0019."""
    fields = set(
        EvidenceEntry.objects.filter(subject=subject).values_list("field", flat=True).distinct()
    )
    now = timezone.now()
    latest = latest_per_value(evidence_as_of(subject=subject, fields=fields, recorded_by=now))
    entries = EvidenceEntry.objects.in_bulk(
        [view.evidence_id for view in latest], field_name="evidence_id"
    )
    with transaction.atomic():
        EvidenceSupport.objects.filter(subject=subject).delete()
        EvidenceSupport.objects.bulk_create(
            EvidenceSupport(
                subject=subject,
                field=view.field,
                value_key=value_key(view.value),
                entry=entries[view.evidence_id],
                changed_at=now,
            )
            for view in latest
        )
    return len(latest)
