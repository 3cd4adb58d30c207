"""One item of a bulk job: acted on through the single-row services, then recorded.

Each item moves `pending → done | skipped | still_unknown | failed` once (a conditional UPDATE on
`pending`), in the transaction of what it did, so two runs of one job never both act.
"""

from __future__ import annotations

import logging

from celery.exceptions import SoftTimeLimitExceeded
from django.db import DatabaseError, transaction
from django.db.models import F
from django.utils import timezone

from reconcile_app.choices import BulkItemState, BulkJobAction, EffectStatus, Role
from reconcile_app.errors import Conflict, DomainError
from reconcile_app.models import BulkJob, BulkJobItem, Effect
from reconcile_app.roles import has_role
from reconcile_app.selectors.bulk import EFFECT_ACTIONABLE
from reconcile_app.services.audit import audit_record
from reconcile_app.services.contradictions import contradiction_resolve
from reconcile_app.services.effects import (
    OwnerUnavailable,
    effect_readback,
    effect_resolve_manually,
    effect_resolve_unknown,
)
from reconcile_app.services.effects.state import source_held

logger = logging.getLogger(__name__)


def item_finish(
    job: BulkJob, item_id: int, state: str, *, before: str = "", after: str = "", detail: str = ""
) -> bool:
    """pending → state, and the job's counters with it. Call inside the item's transaction.
    False when another run got there first, or the job was cancelled (then nothing here may
    be kept).

    The job's row is locked first, as a cancel locks it before the items: locked the other
    way round (the item, then the job's counters), a cancel arriving between the two
    deadlocked with the run on PostgreSQL."""
    BulkJob.objects.select_for_update().filter(pk=job.pk).values_list("pk", flat=True).first()
    moved = BulkJobItem.objects.filter(pk=item_id, state=BulkItemState.PENDING).update(
        state=state, before=before, after=after, detail=detail[:2000], finished_at=timezone.now()
    )
    if moved:
        ok = state != BulkItemState.FAILED
        BulkJob.objects.filter(pk=job.pk).update(
            heartbeat_at=timezone.now(),
            done=F("done") + int(ok),
            failed=F("failed") + int(not ok),
            skipped=F("skipped") + int(state == BulkItemState.SKIPPED),
            still_unknown=F("still_unknown") + int(state == BulkItemState.STILL_UNKNOWN),
        )
    return bool(moved)


def starter_still_operates(job: BulkJob) -> bool:
    """Whether the person the job acts for is still an active operator, read afresh for
    each item: an account taken away mid-incident stops its queued work."""
    user = job.created_by
    if user is None:
        return False
    fresh = type(user).objects.filter(pk=user.pk, is_active=True).first()
    return fresh is not None and has_role(fresh, Role.OPERATOR)


def effect_resolve_item(job: BulkJob, item_id: int, key: str, selected: str = "") -> None:
    """An operator's verdict on one effect, through the single-effect service (which audits
    it, and queues the readback that must still verify a `succeeded`). Given only on the
    status the effect had when selected: an outcome that moved since (unknown, then the
    owner's receipt and a failed readback) was not the state the operator judged."""
    with transaction.atomic():
        effect = Effect.objects.filter(idempotency_key=key).only("status").first()
        before = effect.status if effect else ""
        skipped = ""
        if effect is None or before not in EFFECT_ACTIONABLE[BulkJobAction.RESOLVE]:
            skipped = f"already {before or 'gone'}: nothing to resolve"
        elif selected and before != selected:
            skipped = f"was {selected} when selected, now {before}: not resolved on a state "
            skipped += "nobody confirmed"
        if skipped:
            item_finish(
                job, item_id, BulkItemState.SKIPPED, before=before, after=before, detail=skipped
            )
            return
        try:
            # A savepoint: a refusal rolls back this effect's attempt, not the item's record.
            with transaction.atomic():
                resolved = effect_resolve_manually(
                    idempotency_key=key,
                    outcome=job.outcome,
                    reason=job.reason,
                    actor=job.created_by,
                    request_id=job.request_id,
                )
        except Conflict as exc:  # concluded meanwhile (another operator, the worker)
            item_finish(job, item_id, BulkItemState.SKIPPED, before=before, detail=exc.detail)
            return
        except DomainError as exc:
            item_finish(job, item_id, BulkItemState.FAILED, before=before, detail=exc.detail)
            return
        detail = "awaiting readback" if resolved.status == EffectStatus.ACCEPTED else ""
        if not item_finish(
            job, item_id, BulkItemState.DONE, before=before, after=resolved.status, detail=detail
        ):
            transaction.set_rollback(True)


def effect_check_item(job: BulkJob, item_id: int, key: str) -> None:
    """Re-check now: resolve an unknown outcome by asking the owner (and read back what it
    accepted), or read an accepted / failed-postcondition target back. Network I/O happens
    in the effect services, outside this item's transaction."""
    effect = Effect.objects.filter(idempotency_key=key).select_related("source").first()
    before = effect.status if effect else ""
    if effect is None or before not in EFFECT_ACTIONABLE[BulkJobAction.READBACK]:
        with transaction.atomic():
            item_finish(
                job,
                item_id,
                BulkItemState.SKIPPED,
                before=before,
                after=before,
                detail=f"already {before or 'gone'}: nothing to re-check",
            )
        return
    error = ""
    try:
        if before == EffectStatus.UNKNOWN:
            effect = effect_resolve_unknown(effect_id=effect.pk)
        if effect.status in (EffectStatus.ACCEPTED, EffectStatus.POSTCONDITION_FAILED):
            effect = effect_readback(effect_id=effect.pk)
    except OwnerUnavailable as exc:
        error = f"owner unavailable: {exc}"
    except (DatabaseError, SoftTimeLimitExceeded):
        raise  # the task retries (or the sweep re-queues the job); this item is still pending
    except Exception as exc:  # one broken row must not strand the rest of the job
        logger.exception("bulk job %s: re-check of %s failed", job.job_id, key)
        error = f"{type(exc).__name__}: {exc}"
    effect.refresh_from_db()
    after = effect.status
    state = BulkItemState.FAILED if error else BulkItemState.DONE
    detail = error
    if not error and after == EffectStatus.UNKNOWN:
        # Asked without error and unresolved: its own outcome, not a failure (the owner down
        # or its source held is what "unknown" means until one answers; nothing went wrong).
        state = BulkItemState.STILL_UNKNOWN
        detail = (
            f"still unknown: {effect.source.name} is quarantined, its work is held"
            if source_held(effect.source.name)
            else "still unknown: the owner could not settle it yet; the next check is scheduled"
        )
    with transaction.atomic():
        if not item_finish(job, item_id, state, before=before, after=after, detail=detail):
            # Cancelled while the owner was asked (or another run finished the row): the
            # check happened all the same, in the operator's name. The row says so and the
            # audit has it; it stays counted as the cancel counted it.
            BulkJobItem.objects.filter(pk=item_id, state=BulkItemState.SKIPPED).update(
                before=before,
                after=after,
                detail=f"re-checked as the job was cancelled: {before} → {after}"
                + (f" ({detail})" if detail else ""),
            )
        audit_record(
            actor=job.created_by,
            action="effect.readback",
            object_kind="effect",
            object_ref=key,
            reason=job.reason,
            request_id=job.request_id,
            before={"status": before},
            after={
                "status": after,
                "job_id": job.job_id,
                # Why it is still unknown is said too, not as an error: nothing failed.
                **({"error": error} if error else {"detail": detail} if detail else {}),
            },
        )


def contradiction_resolve_item(job: BulkJob, item_id: int, ref: str) -> None:
    with transaction.atomic():
        try:
            with transaction.atomic():
                contradiction_resolve(
                    contradiction_id=int(ref),
                    actor=job.created_by,
                    note=job.reason,
                    request_id=job.request_id,
                )
        except Conflict as exc:
            item_finish(job, item_id, BulkItemState.SKIPPED, before="resolved", detail=exc.detail)
            return
        except DomainError as exc:
            item_finish(job, item_id, BulkItemState.FAILED, detail=exc.detail)
            return
        if not item_finish(job, item_id, BulkItemState.DONE, before="open", after="resolved"):
            transaction.set_rollback(True)
