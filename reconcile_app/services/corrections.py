"""Corrections: revoke (or supersede) an evidence entry and find everything downstream."""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from lineage_app.selectors.blast import blast_radius
from reconcile_app.choices import CorrectionStatus, EvidenceKind
from reconcile_app.errors import Conflict, NotFound, ValidationFailed
from reconcile_app.limits import says_nothing
from reconcile_app.models import Correction, DecisionSnapshot, EvidenceEntry, SnapshotTaint
from reconcile_app.selectors.lineage import evidence_roots
from reconcile_app.services.audit import audit_record
from reconcile_app.services.enqueue import enqueue_on_commit
from reconcile_app.services.evidence import evidence_append, observed_at_check
from reconcile_app.services.principals import principal_for_user

# Above this many downstream nodes the blast radius is computed by a Celery task.
INLINE_LIMIT = 5000


def correction_create(
    *,
    evidence_id: str,
    reason: str,
    actor: Any,
    replacement: dict[str, Any] | None = None,
    request_id: str = "",
) -> Correction:
    from reconcile_app.tasks import correction_complete_task

    if says_nothing(reason):
        raise ValidationFailed("a correction needs a reason", code="reason_required")
    bad = EvidenceEntry.objects.select_related("revokes").filter(evidence_id=evidence_id).first()
    if bad is None:
        raise NotFound(f"no evidence {evidence_id}", code="evidence_not_found")
    if Correction.objects.filter(corrected=bad).exists():
        raise Conflict(f"{evidence_id} is already corrected", code="already_corrected")
    if bad.kind == EvidenceKind.CORRECTION and bad.revokes_id is not None and not replacement:
        # An entry once withdrawn stays withdrawn: revoking its revocation would be answered
        # as done and change nothing. A replacement states the value again, as a new entry.
        raise Conflict(
            f"{evidence_id} revokes {bad.revokes.evidence_id}: revoking it would not bring "
            f"{bad.revokes.evidence_id} back (a withdrawn entry stays withdrawn in the "
            f"append-only ledger). Correct {evidence_id} with a replacement that states the "
            "value to restore.",
            code="replacement_required",
        )
    if replacement:
        # The replacement becomes the field's latest entry: its time (given, or the corrected
        # entry's) is held to the attestation rule, as any observation's is.
        observed_at_check(replacement.get("observed_at") or bad.observed_at)
    with transaction.atomic():
        entry = evidence_append(
            kind=EvidenceKind.CORRECTION,
            subject=bad.subject,
            field=bad.field,
            value=replacement.get("value") if replacement else None,
            source=f"operator:{getattr(actor, 'username', 'system')}",
            observed_at=(replacement or {}).get("observed_at") or bad.observed_at,
            revokes=None if replacement else evidence_id,
            supersedes=evidence_id if replacement else None,
            note=reason,
            recorded_by=principal_for_user(actor) if getattr(actor, "pk", None) else None,
        )
        # Asked again under the ledger's lock, which the append holds: two operators
        # correcting one entry at once both passed the check above, and both corrections
        # (with two replacements, two values "in force") were recorded.
        if Correction.objects.filter(corrected=bad).exists():
            raise Conflict(f"{evidence_id} is already corrected", code="already_corrected")
        correction = Correction.objects.create(
            correction_id=f"cor_{secrets.token_hex(8)}",
            corrected=bad,
            entry=entry,
            reason=reason,
            actor=actor if getattr(actor, "pk", None) else None,
            created_at=timezone.now(),
        )
        audit_record(
            actor=actor,
            action="correction.create",
            object_kind="evidence",
            object_ref=evidence_id,
            reason=reason,
            request_id=request_id,
            after={"correction_id": correction.correction_id, "entry": entry.evidence_id},
        )
        size = blast_radius(evidence_roots(evidence_id=evidence_id), limit=0).total
        if size <= INLINE_LIMIT:
            correction_complete(correction_id=correction.correction_id)
        else:
            enqueue_on_commit(correction_complete_task, correction.correction_id)
    correction.refresh_from_db()
    return correction


def correction_complete(*, correction_id: str, now: datetime | None = None) -> Correction:
    """Taint every downstream snapshot and store the counts. Idempotent."""
    now = now or timezone.now()
    with transaction.atomic():
        correction = Correction.objects.select_related("corrected").get(correction_id=correction_id)
        if correction.status == CorrectionStatus.COMPLETE:
            return correction
        roots_pairs = evidence_roots(evidence_id=correction.corrected.evidence_id)
        radius = blast_radius(roots_pairs, limit=0)
        snapshot_refs: list[str] = []
        offset, page = 0, 2000
        while True:
            batch = blast_radius(roots_pairs, kinds=["snapshot"], limit=page, offset=offset).nodes
            snapshot_refs.extend(node["ref"] for node in batch)
            if len(batch) < page:
                break
            offset += page
        snapshot_pks = DecisionSnapshot.objects.filter(snapshot_id__in=snapshot_refs).values_list(
            "pk", flat=True
        )
        SnapshotTaint.objects.bulk_create(
            [SnapshotTaint(snapshot_id=pk, correction=correction, at=now) for pk in snapshot_pks],
            ignore_conflicts=True,
        )
        Correction.objects.filter(pk=correction.pk).update(
            status=CorrectionStatus.COMPLETE, counts=radius.counts, completed_at=now
        )
        correction.refresh_from_db()
    return correction
