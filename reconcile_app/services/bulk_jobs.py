"""Bulk triage: one operator's action on many effects (or contradictions), as one job.

`bulk_job_create` resolves the selection (selectors/bulk.py), fixes the job's items, audits
the job with the request's id and queues one Celery task. `bulk_job_run` (that task) walks
the pending items and, for each, calls the single-row service an operator would have called
by hand — a resolution or readback, `effect_resolve_manually`, `contradiction_resolve` —
in its own transaction, so one refusal never undoes the others. It is safe to run twice:
an item leaves `pending` once (a conditional UPDATE), and an effect already concluded when
the job reaches it is skipped, never redone. Every audit row carries the job's request id.

A job outlives its task: a run stops after RUN_BUDGET_SECONDS and queues the next one (so no
run nears the task's time limit), and `bulk_jobs_sweep` (beat) re-queues a running job whose
heartbeat is older than BULK_JOB_STALE_SECONDS — its task was lost with a worker or a broker.

Each item (bulk_items.py) is acted on only while the job's starter is still an active
operator, and an effect is resolved only in the status it had when the job was made.
"""

from __future__ import annotations

import logging
import secrets
import time
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django_filters import FilterSet

from reconcile_app.choices import (
    BulkItemState,
    BulkJobAction,
    BulkJobKind,
    BulkJobStatus,
    Role,
)
from reconcile_app.errors import Conflict, Forbidden, NotFound, ValidationFailed
from reconcile_app.limits import reason_length_check, says_nothing
from reconcile_app.models import BulkJob, BulkJobItem
from reconcile_app.roles import has_role
from reconcile_app.selectors.bulk import (
    Selection,
    contradiction_selection,
    effect_selection,
)
from reconcile_app.services.audit import audit_for_bulk_job, audit_record
from reconcile_app.services.bulk_items import (
    contradiction_resolve_item,
    effect_check_item,
    effect_resolve_item,
    item_finish,
    starter_still_operates,
)
from reconcile_app.services.enqueue import enqueue_on_commit

logger = logging.getLogger(__name__)

OUTCOMES = ("succeeded", "not_executed")
# One item is one owner round trip or two (each bounded by the adapter's timeout): a job
# whose heartbeat has not moved for this long has no task working on it.
BULK_JOB_STALE_SECONDS = 120
# Well inside the task's soft time limit (540 s): a long job is run as a chain of tasks.
RUN_BUDGET_SECONDS = 240.0


def bulk_request_check(
    *, kind: str, action: str, reason: str | None, outcome: str | None = None
) -> str:
    """The action and its arguments, before any row is read; returns the outcome ("" if none)."""
    if not isinstance(reason, str) or says_nothing(reason):
        raise ValidationFailed("a bulk action needs a reason", code="reason_required")
    reason_length_check(reason)
    if kind == BulkJobKind.CONTRADICTIONS:
        if action != BulkJobAction.RESOLVE:
            raise ValidationFailed("contradictions are only resolved", code="invalid_action")
        return ""
    if not isinstance(action, str) or action not in BulkJobAction.values:
        raise ValidationFailed("action must be readback or resolve", code="invalid_action")
    if action == BulkJobAction.READBACK:
        if outcome:
            raise ValidationFailed(
                "a readback takes no outcome; use action resolve", code="outcome_not_applicable"
            )
        return ""
    if not outcome:
        raise ValidationFailed(
            "resolve needs an outcome: succeeded or not_executed", code="outcome_required"
        )
    if not isinstance(outcome, str) or outcome not in OUTCOMES:
        raise ValidationFailed("outcome must be succeeded or not_executed", code="invalid_outcome")
    return outcome


def bulk_selection(
    *,
    kind: str,
    action: str,
    keys: list[Any] | None = None,
    filters: dict[str, Any] | None = None,
    filterset_class: type[FilterSet] | None = None,
) -> Selection:
    """The rows a job would act on. `filterset_class` reads a filter as a list does (the
    console's forgiving text match); by default, as the API's exact filters."""
    chosen = {"filterset_class": filterset_class} if filterset_class is not None else {}
    if kind == BulkJobKind.CONTRADICTIONS:
        return contradiction_selection(ids=keys, filters=filters, **chosen)
    return effect_selection(action=action, keys=keys, filters=filters, **chosen)


def selection_unchanged(selection: Selection, fingerprint: str | None) -> None:
    """Refuse a confirmation whose preview showed other rows than the selection names now."""
    if fingerprint is not None and fingerprint != selection.fingerprint:
        raise Conflict(
            f"the rows changed since the preview: {selection.count} match now; "
            "review them and confirm again",
            code="selection_changed",
            count=selection.count,
        )


def bulk_job_create(
    *,
    actor: Any,
    action: str,
    reason: str | None,
    kind: str = BulkJobKind.EFFECTS,
    outcome: str | None = None,
    keys: list[Any] | None = None,
    filters: dict[str, Any] | None = None,
    filterset_class: type[FilterSet] | None = None,
    request_id: str = "",
    fingerprint: str | None = None,
) -> BulkJob:
    """Fix the job's items, audit it, and queue its task (on commit). With `fingerprint`
    (a preview's `Selection.fingerprint`), refuse (409 `selection_changed`) unless the
    selection still names exactly the rows the operator previewed."""
    if not has_role(actor, Role.OPERATOR):
        raise Forbidden("bulk triage is for operators", code="forbidden")
    outcome = bulk_request_check(kind=kind, action=action, reason=reason, outcome=outcome)
    selection = bulk_selection(
        kind=kind, action=action, keys=keys, filters=filters, filterset_class=filterset_class
    )
    selection_unchanged(selection, fingerprint)
    reason = (reason or "").strip()
    now = timezone.now()
    with transaction.atomic():
        job = BulkJob.objects.create(
            job_id=f"job_{secrets.token_hex(8)}",
            kind=kind,
            action=action,
            outcome=outcome,
            reason=reason,
            selection=selection.asked,
            count=selection.count,
            created_by=actor,
            created_by_name=actor.get_username(),
            request_id=request_id,
            created_at=now,
            heartbeat_at=now,
        )
        BulkJobItem.objects.bulk_create(
            BulkJobItem(
                job=job,
                position=position,
                ref=ref,
                selected_status=selection.statuses.get(ref, ""),
            )
            for position, ref in enumerate(selection.refs)
        )
        audit_record(
            actor=actor,
            action="bulk_job.create",
            object_kind="job",
            object_ref=job.job_id,
            reason=reason,
            request_id=request_id,
            after={
                "kind": kind,
                "action": action,
                "outcome": outcome,
                "count": job.count,
                "selection": selection.asked,
            },
        )
        from reconcile_app.tasks import bulk_job_run_task

        job_id = job.job_id
        enqueue_on_commit(bulk_job_run_task, job_id)
    return job


def bulk_job_run(*, job_id: str, budget_seconds: float = RUN_BUDGET_SECONDS) -> BulkJob:
    """Act on the pending items, then mark the job done. Safe to run twice (or at once).

    After `budget_seconds` the run stops between items and queues the next run, so one
    task never reaches its time limit however many items the job holds."""
    job = BulkJob.objects.select_related("created_by").get(job_id=job_id)
    if job.status != BulkJobStatus.RUNNING:
        return job
    BulkJob.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now())
    started = time.monotonic()
    pending = list(
        job.items.filter(state=BulkItemState.PENDING)
        .order_by("position")
        .values_list("pk", "ref", "selected_status")
    )
    for index, (item_id, ref, selected) in enumerate(pending):
        # At least one item per run, so a run always moves the job on.
        if index and time.monotonic() - started > budget_seconds:
            from reconcile_app.tasks import bulk_job_run_task

            enqueue_on_commit(bulk_job_run_task, job_id)
            job.refresh_from_db()
            return job
        if not BulkJob.objects.filter(pk=job.pk, status=BulkJobStatus.RUNNING).exists():
            break  # cancelled: its pending items were skipped as it was
        if not starter_still_operates(job):
            with transaction.atomic():
                item_finish(
                    job,
                    item_id,
                    BulkItemState.FAILED,
                    detail=f"not acted on: {job.created_by_name} is no longer an active "
                    "operator (the job acts in their name)",
                )
            continue
        with audit_for_bulk_job(job.job_id):
            if job.kind == BulkJobKind.CONTRADICTIONS:
                contradiction_resolve_item(job, item_id, ref)
            elif job.action == BulkJobAction.RESOLVE:
                effect_resolve_item(job, item_id, ref, selected)
            else:
                effect_check_item(job, item_id, ref)
    with transaction.atomic():
        if not job.items.filter(state=BulkItemState.PENDING).exists():
            BulkJob.objects.filter(pk=job.pk, status=BulkJobStatus.RUNNING).update(
                status=BulkJobStatus.DONE, finished_at=timezone.now()
            )
    job.refresh_from_db()
    return job


def bulk_job_cancel(
    *, job_id: str, actor: Any, reason: str | None, request_id: str = ""
) -> BulkJob:
    """Stop a running job: its pending items are skipped (saying who cancelled it and why)
    and its runs act on nothing more. The item a run is acting on at that moment finishes
    or, a resolution, is undone with it (its conditional move out of `pending` fails)."""
    if not has_role(actor, Role.OPERATOR):
        raise Forbidden("cancelling a bulk job is for operators", code="forbidden")
    if not isinstance(reason, str) or says_nothing(reason):
        raise ValidationFailed("cancelling a job needs a reason", code="reason_required")
    reason_length_check(reason)
    reason = reason.strip()
    with transaction.atomic():
        job = BulkJob.objects.select_for_update().filter(job_id=job_id).first()
        if job is None:
            raise NotFound(f"no job {job_id}", code="job_not_found")
        if job.status != BulkJobStatus.RUNNING:
            raise Conflict(
                f"{job_id} is {job.status}: only a running job is cancelled", code="job_not_running"
            )
        before = {"status": job.status, "done": job.done, "failed": job.failed}
        name = actor.get_username()
        stopped = job.items.filter(state=BulkItemState.PENDING).update(
            state=BulkItemState.SKIPPED,
            detail=f"not acted on: the job was cancelled by {name}: {reason}"[:2000],
            finished_at=timezone.now(),
        )
        if not stopped:
            # Every row acted on; the run is only yet to say so. (Raising undoes nothing
            # here: the update above moved no row.)
            raise Conflict(
                f"{job_id} has acted on every row: nothing is left to stop",
                code="job_not_running",
            )
        now = timezone.now()
        BulkJob.objects.filter(pk=job.pk).update(
            status=BulkJobStatus.CANCELLED,
            finished_at=now,
            heartbeat_at=now,
            cancelled_by_name=name,
            cancel_reason=reason,
            done=F("done") + stopped,
            skipped=F("skipped") + stopped,
        )
        job.refresh_from_db()
        audit_record(
            actor=actor,
            action="bulk_job.cancel",
            object_kind="job",
            object_ref=job.job_id,
            reason=reason,
            request_id=request_id,
            before=before,
            after={"status": job.status, "not_acted_on": stopped, "done": job.done},
        )
    return job


def bulk_jobs_sweep(*, now: Any = None, stale_seconds: int = BULK_JOB_STALE_SECONDS) -> int:
    """Queue again every running job whose heartbeat is older than `stale_seconds`.

    The heartbeat moves forward as the job is queued, so the next sweep waits another
    `stale_seconds` before trying again (an outage does not flood the queue), and two sweeps
    at once queue a job once: the move is conditional on the heartbeat each one read."""
    from reconcile_app.tasks import bulk_job_run_task

    now = now or timezone.now()
    stale = list(
        BulkJob.objects.filter(
            status=BulkJobStatus.RUNNING, heartbeat_at__lt=now - timedelta(seconds=stale_seconds)
        ).values_list("pk", "job_id", "heartbeat_at")
    )
    requeued = 0
    for pk, job_id, heartbeat_at in stale:
        with transaction.atomic():
            moved = BulkJob.objects.filter(
                pk=pk, status=BulkJobStatus.RUNNING, heartbeat_at=heartbeat_at
            ).update(heartbeat_at=now, requeues=F("requeues") + 1)
            if moved:
                logger.warning("bulk job %s quiet since %s: queued again", job_id, heartbeat_at)
                enqueue_on_commit(bulk_job_run_task, job_id)
                requeued += 1
    return requeued
