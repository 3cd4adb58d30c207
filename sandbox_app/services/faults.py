"""Faults injected into a sandbox source, and the audit of operators' changes."""

from __future__ import annotations

import time
from typing import Any

from django.db import transaction
from django.db.models import F

from reconcile_app.errors import DomainError, ValidationFailed
from reconcile_app.services.audit import audit_record
from sandbox_app.choices import FaultKind
from sandbox_app.models import (
    SandboxFault,
)


class SandboxUnavailable(DomainError):
    status = 503
    code = "owner_unavailable"
    title = "Owner unavailable"
    # As a real owner would say it (and as the effects API does for its own 503).
    retry_after = 5


def fault_fires(faults: list[SandboxFault], kind: str) -> SandboxFault | None:
    """Return the fault if one of this kind fires now, consuming one use of a counted fault."""
    for fault in faults:
        if fault.kind != kind:
            continue
        if fault.remaining is None:
            return fault
        # Conditional decrement: concurrent readers cannot both consume the last use.
        used = SandboxFault.objects.filter(pk=fault.pk, remaining__gt=0).update(
            remaining=F("remaining") - 1
        )
        SandboxFault.objects.filter(pk=fault.pk, remaining=0).delete()
        if used:
            return fault
    return None


class SandboxNoAnswer(Exception):
    """The injected latency outlasts the caller's deadline: no answer, as a client whose read
    timeout passed gets none (the command, if one was sent, is not applied)."""


# The longest an injected latency holds a call.
LATENCY_MOST_SECONDS = 60


def slow_down(faults: list[SandboxFault], within: float | None = None) -> None:
    """Wait out a latency fault. `within`, the caller's deadline in seconds, ends the wait
    there with SandboxNoAnswer: the product's adapter waits no longer on this owner than on
    one it reaches over HTTP (the source's `timeout_ms`), so a latency past a web worker's
    own timeout cannot take the worker, and the agent's request, down with it."""
    latency = fault_fires(faults, FaultKind.LATENCY)
    if latency is None:
        return
    seconds = min(latency.seconds, LATENCY_MOST_SECONDS)
    if within is not None and seconds > within:
        time.sleep(within)
        raise SandboxNoAnswer(f"no answer within {within:g} s (injected latency of {seconds} s)")
    time.sleep(seconds)


def sandbox_audit(
    actor: Any, action: str, ref: str, request_id: str, after: dict[str, Any]
) -> None:
    """Operators' changes to the owner system land in the audit trail; the product's own
    in-process use (demo set-up, drills, the adapter) passes no actor."""
    if actor is not None:
        audit_record(
            actor=actor,
            action=action,
            object_kind="sandbox",
            object_ref=ref,
            request_id=request_id,
            after=after,
        )


def sandbox_fault_add(
    *,
    source: str,
    kind: str,
    count: int | None = None,
    seconds: int = 0,
    actor: Any = None,
    request_id: str = "",
) -> SandboxFault:
    if kind not in FaultKind.values:
        raise ValidationFailed(f"unknown fault kind {kind!r}", code="unknown_fault")
    if count is not None and count < 1:
        raise ValidationFailed("count must be at least 1", code="invalid_count")
    if kind in (FaultKind.LAG, FaultKind.LATENCY) and seconds < 1:
        raise ValidationFailed(f"a {kind} fault needs seconds ≥ 1", code="invalid_seconds")
    with transaction.atomic():
        fault = SandboxFault.objects.create(
            source=source, kind=kind, remaining=count, seconds=seconds
        )
        sandbox_audit(
            actor,
            "sandbox.fault.add",
            source,
            request_id,
            {"kind": kind, "count": count, "seconds": seconds},
        )
    return fault


def sandbox_faults_clear(*, source: str, actor: Any = None, request_id: str = "") -> int:
    with transaction.atomic():
        deleted, _ = SandboxFault.objects.filter(source=source).delete()
        sandbox_audit(actor, "sandbox.fault.clear", source, request_id, {"cleared": deleted})
    return deleted
