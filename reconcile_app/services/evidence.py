"""Append to the evidence ledger. There is no update and no delete: corrections are entries."""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from reconcile_app.canonical import content_hash, rfc3339
from reconcile_app.choices import EvidenceKind
from reconcile_app.errors import Conflict, ValidationFailed
from reconcile_app.models import EvidenceEntry, LedgerHead, Principal
from reconcile_app.services.provenance import evidence_lineage
from reconcile_app.services.references import missing_references, split_reference

EVIDENCE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$")


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
        "revokes": entry.revokes.evidence_id if entry.revokes_id else None,
        "supersedes": entry.supersedes.evidence_id if entry.supersedes_id else None,
        "derived_from": entry.derived_from,
        "note": entry.note,
        "recorded_by": entry.recorded_by.name if entry.recorded_by_id else None,
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
) -> EvidenceEntry:
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
        [*derived_from, *(ref for ref in (revokes, supersedes) if ref is not None)]
    )
    if missing:
        raise ValidationFailed(
            f"unknown references: {', '.join(missing)}", code="unknown_reference", missing=missing
        )
    with transaction.atomic():
        # Serialise appends on the chain head: each entry must chain onto its predecessor.
        head, _ = LedgerHead.objects.select_for_update().get_or_create(pk=1)
        new_id = evidence_id or f"ev-{secrets.token_hex(6)}"
        if EvidenceEntry.objects.filter(evidence_id=new_id).exists():
            raise Conflict(f"evidence {new_id} already exists", code="evidence_id_taken")
        targets = {
            entry.evidence_id: entry
            for entry in EvidenceEntry.objects.filter(
                evidence_id__in=[ref for ref in (revokes, supersedes) if ref]
            )
        }
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
        entry.save(force_insert=True)
        head.seq, head.hash = entry.seq, entry.hash
        head.save(update_fields=["seq", "hash"])
        evidence_lineage(
            evidence_id=entry.evidence_id,
            derived_from=entry.derived_from,
            revokes=revokes,
            supersedes=supersedes,
            label=f"{kind} {subject}.{field}",
        )
    return entry
