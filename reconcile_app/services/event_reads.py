"""Reads from event-sourced owners: fetch the subject's events and fold them with the
contract's reducer. Replay folds the events recorded by the cut-off with the same version.
"""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from reconcile_app.choices import ReadStatus
from reconcile_app.models import Source
from reconcile_app.reconciliation.types import ContractSpec, FieldRead
from reconcile_app.reducers import fold, reducer_named
from reconcile_app.sources import SourceAdapter


def folded_reads(
    *,
    spec: ContractSpec,
    source: Source,
    adapter: SourceAdapter,
    subject: str,
    fields: list[str],
    recorded_before: datetime | None = None,
    valid_by: datetime | None = None,
) -> list[FieldRead]:
    reducer = reducer_named(spec.reducer) if spec.reducer else None
    # The read is "the events recorded by read_at": stored with the snapshot, it lets replay
    # fold exactly the same events.
    read_at = recorded_before or timezone.now()

    def failed(status: str, detail: str) -> list[FieldRead]:
        return [
            FieldRead(
                field=name,
                source=source.name,
                consistency=source.consistency,
                status=status,
                value=None,
                version=None,
                observed_at=None,
                valid_from=None,
                recorded_at=None,
                read_at=read_at,
                detail=detail,
            )
            for name in fields
        ]

    if reducer is None:
        return failed(ReadStatus.UNAVAILABLE, f"no reducer {spec.reducer or '(none)'} to fold")
    try:
        delivered = adapter.events(subject, recorded_before=read_at)
    except Exception as exc:
        return failed(ReadStatus.UNAVAILABLE, f"adapter error: {type(exc).__name__}")
    if delivered.status != ReadStatus.OK:
        return failed(delivered.status, delivered.detail)
    events = delivered.events
    if valid_by is not None:
        # Late arrivals count for the valid time they describe, never for a later one.
        events = [event for event in events if event.valid_from <= valid_by]
    folded = fold(reducer, events)
    if folded.status != "ok":
        return failed(ReadStatus.CONFLICT, folded.detail)
    return [
        FieldRead(
            field=name,
            source=source.name,
            consistency=source.consistency,
            status=ReadStatus.OK,
            value=folded.values.get(name),
            version=folded.last_seq,
            observed_at=delivered.observed_at or read_at,
            valid_from=folded.valid_from,
            recorded_at=folded.recorded_at,
            read_at=read_at,
            detail=f"folded {len(folded.applied)} events with {reducer.label}",
            inputs=folded.inputs.get(name),
        )
        for name in fields
    ]
