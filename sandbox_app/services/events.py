"""Events of event-sourced sandbox sources, delivered as a real owner would (faults too)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from reconcile_app.advisory_locks import names_held
from reconcile_app.errors import Conflict
from sandbox_app.choices import FaultKind
from sandbox_app.models import (
    SandboxEvent,
    SandboxFault,
)
from sandbox_app.services.faults import (
    SandboxUnavailable,
    fault_fires,
    sandbox_audit,
    slow_down,
)

# The advisory-lock namespace of sandbox event appends ("SBEV" in ASCII): none of the
# product's other advisory locks uses it.
EVENT_APPEND_LOCK = 0x53424556


def _appends_held(source: str) -> None:
    """Inside a transaction: the source's appends take turns, so one without `seq` reads the
    last one committed (two at once shared a seq: events the reducer cannot order) and a
    repeated `event_id` is refused as `event_exists`, not by the unique index (a 500)."""
    names_held(EVENT_APPEND_LOCK, [source])


def sandbox_event_append(
    *,
    source: str,
    event_id: str,
    type: str,
    subject: str,
    field: str = "",
    value: Any = None,
    seq: int | None = None,
    valid_from: datetime | None = None,
    actor: Any = None,
    request_id: str = "",
) -> SandboxEvent:
    """Record an event. Without `seq` it goes after the source's last event."""
    now = timezone.now()
    with transaction.atomic():
        _appends_held(source)
        if SandboxEvent.objects.filter(source=source, event_id=event_id).exists():
            raise Conflict(f"event {event_id} already recorded", code="event_exists")
        if seq is None:
            last = (
                SandboxEvent.objects.filter(source=source)
                .order_by("-seq")
                .values_list("seq", flat=True)
                .first()
            )
            seq = (last or 0) + 1
        event = SandboxEvent.objects.create(
            source=source,
            event_id=event_id,
            seq=seq,
            type=type,
            subject=subject,
            field=field,
            value=value,
            valid_from=valid_from or now,
            recorded_at=now,
        )
        sandbox_audit(
            actor,
            "sandbox.event.append",
            f"{source}/{event_id}",
            request_id,
            {"type": type, "subject": subject, "field": field, "value": value, "seq": seq},
        )
        return event


@dataclass(frozen=True)
class SandboxEventsRead:
    events: list[SandboxEvent]
    observed_at: datetime


def sandbox_events_read(
    *,
    source: str,
    subject: str,
    after: int | None = None,
    recorded_before: datetime | None = None,
    within: float | None = None,
) -> SandboxEventsRead:
    """The subject's events in `seq` order, as delivered (faults may duplicate or reorder).
    Raises SandboxUnavailable, or SandboxNoAnswer when a latency outlasts `within` seconds."""
    faults = list(SandboxFault.objects.filter(source=source))
    slow_down(faults, within)
    if fault_fires(faults, FaultKind.UNAVAILABLE):
        raise SandboxUnavailable(f"{source} is unavailable (injected fault)")
    events = SandboxEvent.objects.filter(source=source, subject=subject)
    if after is not None:
        events = events.filter(seq__gt=after)
    if recorded_before is not None:
        events = events.filter(recorded_at__lte=recorded_before)
    delivered = list(events.order_by("seq", "id"))
    if fault_fires(faults, FaultKind.DUPLICATE_DELIVERY):
        delivered = delivered + delivered[: max(1, len(delivered) // 2)]
    if fault_fires(faults, FaultKind.REORDER):
        delivered = list(reversed(delivered))
    now = timezone.now()
    lag = fault_fires(faults, FaultKind.LAG)
    return SandboxEventsRead(
        events=delivered, observed_at=now - timedelta(seconds=lag.seconds) if lag else now
    )
