"""Reads from the owners of a contract's fields, through their adapters.

Live sources are read field by field; event-sourced ones have their events fetched and
folded with the contract's reducer (replay folds the events recorded by the cut-off with the
same version). Failures become read statuses, never exceptions: a required field that is not
`ok` fails the decision closed.
"""

from __future__ import annotations

import logging
from datetime import datetime

from django.utils import timezone

from reconcile_app.choices import ReadStatus
from reconcile_app.models import Source
from reconcile_app.reconciliation.types import ContractSpec, FieldRead
from reconcile_app.reducers import fold, reducer_named
from reconcile_app.sources import ReadResult, SourceAdapter, adapter_for, read_failing_closed

logger = logging.getLogger(__name__)


def read_fields(
    *,
    spec: ContractSpec,
    subject: str,
    sources: dict[str, Source],
    quarantined: frozenset[str] = frozenset(),
) -> list[FieldRead]:
    """Read every contract field from its owner. Adapters turn failures into statuses.

    A quarantined source is not asked at all: its fields are `quarantined`.
    """
    reads: list[FieldRead] = []
    adapters: dict[str, SourceAdapter] = {}
    folded: dict[str, FieldRead] = {}
    for source_name in {
        f.source
        for f in spec.fields
        if sources[f.source].mode == "event_sourced" and f.source not in quarantined
    }:
        source = sources[source_name]
        adapter = adapters.setdefault(source.name, adapter_for(source))
        names = [f.name for f in spec.fields if f.source == source_name]
        for read in folded_reads(
            spec=spec, source=source, adapter=adapter, subject=subject, fields=names
        ):
            folded[read.field] = read
    live = [
        (field_spec.name, sources[field_spec.source])
        for field_spec in spec.fields
        if field_spec.name not in folded and field_spec.source not in quarantined
    ]
    answered = _read_live(adapters, subject, live)
    for field_spec in spec.fields:
        if field_spec.name in folded:
            reads.append(folded[field_spec.name])
            continue
        source = sources[field_spec.source]
        if source.name in quarantined:
            reads.append(
                FieldRead(
                    field=field_spec.name,
                    source=source.name,
                    consistency=source.consistency,
                    status=ReadStatus.QUARANTINED,
                    value=None,
                    version=None,
                    observed_at=None,
                    valid_from=None,
                    recorded_at=None,
                    read_at=timezone.now(),
                    detail=f"{source.name} is quarantined",
                )
            )
            continue
        result = answered[field_spec.name]
        reads.append(
            FieldRead(
                field=field_spec.name,
                source=source.name,
                consistency=source.consistency,
                status=str(result.status),
                value=result.value,
                version=result.version,
                observed_at=result.observed_at,
                valid_from=result.valid_from,
                recorded_at=result.recorded_at,
                read_at=timezone.now(),
                detail=result.detail,
            )
        )
    return reads


def _read_live(
    adapters: dict[str, SourceAdapter], subject: str, live: list[tuple[str, Source]]
) -> dict[str, ReadResult]:
    """Every live field's read, batched by adapter class (the sandbox answers all of its
    sources' reads in two queries). A batch that raises is read again field by field, so
    one failing owner fails only its own fields."""
    answered: dict[str, ReadResult] = {}
    by_class: dict[type[SourceAdapter], list[tuple[str, Source, SourceAdapter]]] = {}
    for field, source in live:
        try:
            adapter = adapters.get(source.name) or adapters.setdefault(
                source.name, adapter_for(source)
            )
        except Exception:
            answered[field] = _read_one(adapters, source, subject, field)  # fails closed
            continue
        by_class.setdefault(type(adapter), []).append((field, source, adapter))
    for adapter_class, batch in by_class.items():
        results: list[ReadResult] | None = None
        if len(batch) > 1:
            try:
                results = adapter_class.read_batch(
                    [(adapter, subject, field) for field, _, adapter in batch]
                )
            except Exception:
                logger.exception("batched read by %s raised; reading field by field", adapter_class)
        if results is None:
            results = [_read_one(adapters, source, subject, field) for field, source, _ in batch]
        for (field, _, _), result in zip(batch, results, strict=True):
            answered[field] = result
    return answered


def _read_one(
    adapters: dict[str, SourceAdapter], source: Source, subject: str, field: str
) -> ReadResult:
    """One read; an adapter that raises, or cannot be made, fails closed as `unavailable`
    instead of crashing."""
    try:
        adapter = adapters.get(source.name) or adapters.setdefault(source.name, adapter_for(source))
    except Exception as exc:
        logger.exception("adapter of %s could not be made for %s/%s", source.name, subject, field)
        return ReadResult.failed(ReadStatus.UNAVAILABLE, f"adapter error: {type(exc).__name__}")
    return read_failing_closed(adapter, subject, field)


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
