"""Append to the evidence ledger. There is no update and no delete: corrections are entries.

`evidence_append` is the ledger itself (the product's own receipts, readbacks and
corrections go through it); `evidence_attest` is what a caller outside the product may do:
append evidence for a source it is allowed to vouch for, never a correction.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from config.insert_batch import inserted_fields, prepared_values
from reconcile_app.canonical import content_hash, rfc3339
from reconcile_app.choices import EvidenceKind
from reconcile_app.epochs import epochs_seen
from reconcile_app.errors import Conflict, DomainError, Forbidden, ValidationFailed
from reconcile_app.instants import FUTURE_TOLERANCE
from reconcile_app.models import EvidenceEntry, LedgerHead, Principal
from reconcile_app.selectors.capabilities import may_attest, principal_is_operator
from reconcile_app.services.audit import audit_record
from reconcile_app.services.evidence_support import evidence_support_note
from reconcile_app.services.fresh_ids import fresh_candidate, new_record_id
from reconcile_app.services.principals import access_changed_since
from reconcile_app.services.provenance import evidence_lineage
from reconcile_app.services.references import missing_references, split_reference

# How far ahead of the server's clock an observation may claim to be (clock skew).

EVIDENCE_PREFIX = "ev-"
EVIDENCE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$")


def observed_at_check(observed_at: datetime) -> None:
    """422 `observed_in_future` for an observation dated ahead of the server's clock (beyond
    skew): it would stay the latest entry for its field and contradict every state to come."""
    if observed_at > timezone.now() + FUTURE_TOLERANCE:
        raise DomainError(
            f"observed_at {rfc3339(observed_at)} is ahead of the server's clock",
            code="observed_in_future",
            status=422,
            title="Observed in the future",
            tolerance_seconds=int(FUTURE_TOLERANCE.total_seconds()),
        )


def entry_hash_content(entry: EvidenceEntry) -> dict[str, Any]:
    """Exactly what the hash covers; verify_ledger recomputes it from stored rows."""
    return {
        "seq": entry.seq,
        "evidence_id": entry.evidence_id,
        "kind": entry.kind,
        "subject": entry.subject,
        "field": entry.field,
        "value": entry.value,
        "source": entry.source,
        "observed_at": rfc3339(entry.observed_at),
        "recorded_at": rfc3339(entry.recorded_at),
        "revokes": entry.revokes.evidence_id if entry.revokes is not None else None,
        "supersedes": entry.supersedes.evidence_id if entry.supersedes is not None else None,
        "derived_from": entry.derived_from,
        "note": entry.note,
        "recorded_by": entry.recorded_by.name if entry.recorded_by is not None else None,
        "prev_hash": entry.prev_hash,
    }


def _ledger_ref(reference: str | None) -> str | None:
    """`evidence:ev-1` or `ev-1` → `ev-1`; only ledger entries can be revoked or superseded."""
    if reference is None:
        return None
    kind, ref = split_reference(reference)
    if kind != "evidence":
        raise ValidationFailed(
            f"{reference} is not an evidence entry: only ledger entries are corrected",
            code="unknown_reference",
            missing=[reference],
        )
    return ref


def evidence_append(
    *,
    kind: str,
    subject: str,
    field: str = "",
    value: Any = None,
    source: str,
    observed_at: datetime,
    revokes: str | None = None,
    supersedes: str | None = None,
    derived_from: Sequence[str] = (),
    note: str = "",
    recorded_by: Principal | None = None,
    evidence_id: str | None = None,
    visible_to: Principal | None = None,
    generated_by: str | None = None,
    derived_from_held: bool = False,
) -> EvidenceEntry:
    """Append one entry. `visible_to` scopes the references a caller may derive from;
    `generated_by` names the effect (its idempotency key) whose receipt, readback or
    resolution this is, in the entry's lineage. `derived_from_held`: the caller read every
    row `derived_from` names (an effect's own snapshot, which is never deleted), so they are
    not looked up again."""
    if kind not in EvidenceKind.values:
        raise ValidationFailed(
            f"kind must be one of {', '.join(EvidenceKind.values)}", code="invalid_kind"
        )
    if evidence_id is not None and not EVIDENCE_ID.match(evidence_id):
        raise ValidationFailed(
            "evidence_id must be 1-100 letters, digits, '.', '_', ':' or '-'",
            code="invalid_evidence_id",
        )
    revokes, supersedes = (_ledger_ref(ref) for ref in (revokes, supersedes))
    missing = missing_references(
        [
            *(() if derived_from_held else derived_from),
            *(ref for ref in (revokes, supersedes) if ref is not None),
        ],
        visible_to=visible_to,
    )
    if missing:
        raise ValidationFailed(
            f"unknown references: {', '.join(missing)}", code="unknown_reference", missing=missing
        )
    with transaction.atomic():
        # Serialise appends on the chain head: each entry must chain onto its predecessor.
        head, _ = LedgerHead.objects.select_for_update().get_or_create(pk=1)
        targets = {
            entry.evidence_id: entry
            for entry in EvidenceEntry.objects.filter(
                evidence_id__in=[ref for ref in (revokes, supersedes) if ref]
            )
        }

        def entry_named(new_id: str) -> EvidenceEntry:
            entry = EvidenceEntry(
                seq=head.seq + 1,
                evidence_id=new_id,
                kind=kind,
                subject=subject,
                field=field,
                value=value,
                source=source,
                observed_at=observed_at,
                recorded_at=timezone.now(),
                revokes=targets.get(revokes) if revokes else None,
                supersedes=targets.get(supersedes) if supersedes else None,
                derived_from=list(derived_from),
                note=note,
                recorded_by=recorded_by,
                prev_hash=head.hash,
            )
            entry.hash = content_hash(entry_hash_content(entry))
            return entry

        entry = _chained(head, entry_named, chosen=evidence_id)
        evidence_support_note(entry)
        evidence_lineage(
            evidence_id=entry.evidence_id,
            derived_from=entry.derived_from,
            revokes=revokes,
            supersedes=supersedes,
            label=f"{kind} {subject}.{field}",
            generated_by=generated_by,
        )
    return entry


def _chained(
    head: LedgerHead, entry_named: Callable[[str], EvidenceEntry], *, chosen: str | None
) -> EvidenceEntry:
    """Insert the entry (under the caller's id, or a fresh one) and move the locked `head`
    onto it. On PostgreSQL one statement does both, and an id already held writes nothing and
    draws again (the id is in the hash: the entry is made anew); elsewhere the id is looked
    up first, then the entry and the head are written."""
    if connection.vendor != "postgresql":
        entry = entry_named(
            new_record_id(
                EvidenceEntry,
                "evidence_id",
                EVIDENCE_PREFIX,
                chosen,
                noun="evidence",
                taken_code="evidence_id_taken",
            )
        )
        entry.save(force_insert=True)
        head.seq, head.hash = entry.seq, entry.hash
        head.save(update_fields=["seq", "hash"])
        return entry
    while True:
        entry = entry_named(chosen or fresh_candidate(EVIDENCE_PREFIX))
        if _inserted_onto_head(entry, head):
            head.seq, head.hash = entry.seq, entry.hash
            return entry
        if chosen:
            raise Conflict(f"evidence {chosen} already exists", code="evidence_id_taken")


@functools.cache
def _insert_onto_head_sql() -> str:
    """INSERT the entry unless its evidence id is held, and only then move the head: one
    statement, whose row is the new entry's key (none when the id was held)."""
    quote = connection.ops.quote_name
    fields = inserted_fields(EvidenceEntry)
    columns = ", ".join(quote(entry_field.column) for entry_field in fields)
    values = ", ".join(["%s"] * len(fields))
    return (
        f"WITH entry AS (INSERT INTO {quote(EvidenceEntry._meta.db_table)} ({columns}) "  # noqa: S608  # nosec B608 - the model's own names
        f"VALUES ({values}) ON CONFLICT (evidence_id) DO NOTHING RETURNING id) "
        f"UPDATE {quote(LedgerHead._meta.db_table)} SET seq = %s, hash = %s "
        "WHERE id = %s AND EXISTS (SELECT 1 FROM entry) RETURNING (SELECT id FROM entry)"
    )


def _inserted_onto_head(entry: EvidenceEntry, head: LedgerHead) -> bool:
    values = prepared_values(entry, inserted_fields(EvidenceEntry))
    with connection.cursor() as cursor:
        cursor.execute(_insert_onto_head_sql(), [*values, entry.seq, entry.hash, head.pk])
        row = cursor.fetchone()
    if row is None:
        return False
    entry.pk = row[0]
    entry._state.adding = False
    entry._state.db = connection.alias
    return True


def evidence_attest(
    *,
    principal: Principal,
    kind: str,
    subject: str,
    source: str,
    observed_at: datetime,
    field: str = "",
    value: Any = None,
    revokes: str | None = None,
    supersedes: str | None = None,
    derived_from: Sequence[str] = (),
    note: str = "",
    evidence_id: str | None = None,
    request_id: str = "",
) -> EvidenceEntry:
    """Evidence from outside the product: only for a source the principal may vouch for.

    Corrections and revocations never come this way: they go through `correction_create`,
    which taints what relied on the entry and records who corrected it and why. An
    observation dated ahead of the server's clock is refused: it would stay "the latest"
    and contradict every future state of the subject.
    """
    if kind == EvidenceKind.CORRECTION or revokes:
        raise Forbidden(
            "corrections and revocations go through POST /api/v1/corrections (operators), "
            "which marks what relied on the entry",
            code="correction_requires_operator",
        )
    seen = epochs_seen()
    observed_at_check(observed_at)
    operator = principal_is_operator(principal)
    vouched = {source}
    if supersedes:
        _, superseded = split_reference(supersedes)
        vouched |= set(
            EvidenceEntry.objects.filter(evidence_id=superseded).values_list("source", flat=True)
        )
    _vouch_check(principal, vouched, operator=operator)
    with transaction.atomic():
        # The epochs first, held to the end (as an effect's commit holds them): access taken
        # back since the request was authenticated moved one, and is checked again now; one
        # taken back later waits for the entry.
        if access_changed_since(principal, seen):
            # An operator may vouch for any source: asked again as what they are now.
            operator = principal_is_operator(principal)
            _vouch_check(principal, vouched, operator=operator)
        entry = evidence_append(
            kind=kind,
            subject=subject,
            field=field,
            value=value,
            source=source,
            observed_at=observed_at,
            supersedes=supersedes,
            derived_from=derived_from,
            note=note,
            recorded_by=principal,
            evidence_id=evidence_id,
            visible_to=None if operator else principal,
        )
        if operator:
            audit_record(
                actor=principal.user,
                action="evidence.attest",
                object_kind="evidence",
                object_ref=entry.evidence_id,
                reason=note,
                request_id=request_id,
                after={
                    "kind": kind,
                    "subject": subject,
                    "field": field,
                    "source": source,
                    "supersedes": entry.supersedes.evidence_id
                    if entry.supersedes is not None
                    else None,
                },
            )
    return entry


def _vouch_check(principal: Principal, vouched: set[str], *, operator: bool) -> None:
    for name in sorted(vouched):
        if not operator and not may_attest(principal, name):
            raise Forbidden(
                f"{principal.name} may not attest evidence of {name} (needs attest:{name})",
                code="attestation_not_allowed",
                capability=f"attest:{name}",
            )


# The ledger's head held FOR SHARE: every append moves it under FOR UPDATE (`_chained`), so
# an append waits for the holder's transaction, or committed before and is seen by it.
_LEDGER_HELD = f"SELECT seq FROM {LedgerHead._meta.db_table} WHERE id = 1 FOR SHARE"  # noqa: S608  # nosec B608


def ledger_held() -> None:
    """Inside a transaction: no evidence is appended until it ends (PostgreSQL; SQLite's
    IMMEDIATE transactions serialise writers anyway)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(_LEDGER_HELD)
