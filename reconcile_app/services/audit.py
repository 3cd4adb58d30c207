"""The operator audit trail: who did what, when, why, with before and after."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.utils import timezone

from config.logs import request_id_var
from reconcile_app.models import AuditEvent

# The bulk job whose item is being acted on: the single-row services it calls write their
# own audit rows, and each names the job, so one verdict leads to the selection it came in.
bulk_job_var: ContextVar[str] = ContextVar("bulk_job", default="")


@contextmanager
def audit_for_bulk_job(job_id: str) -> Iterator[None]:
    token = bulk_job_var.set(job_id)
    try:
        yield
    finally:
        bulk_job_var.reset(token)


def audit_record(
    *,
    actor: Any,
    action: str,
    object_kind: str,
    object_ref: str,
    reason: str = "",
    request_id: str = "",
    before: Any = None,
    after: Any = None,
) -> AuditEvent:
    """Call inside the transaction of the change it describes, so both land or neither does.

    Without a `request_id`, the one the work runs under: the web request's, or in a Celery
    task the request's that enqueued it (config/celery.py carries it), else the task's id. A
    drill's or a sweep's rows then lead back to the start that caused them. Inside
    `audit_for_bulk_job`, `after` names the job (`job_id`)."""
    job_id = bulk_job_var.get()
    if job_id and (after is None or isinstance(after, dict)):
        after = {**(after or {}), "job_id": job_id}
    return AuditEvent.objects.create(
        at=timezone.now(),
        actor=actor if getattr(actor, "pk", None) else None,
        actor_name=getattr(actor, "username", "") or "system",
        action=action,
        object_kind=object_kind,
        object_ref=object_ref,
        reason=reason,
        request_id=request_id or request_id_var.get(),
        before=before,
        after=after,
    )
