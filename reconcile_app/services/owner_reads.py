"""Reads from the owners of a contract's fields, through their adapters.

Live sources are read field by field; event-sourced ones have their events fetched, together
with the live reads, and folded with the contract's reducer (replay folds the events recorded
by the cut-off with the same version). Failures become read statuses, never exceptions: a
required field that is not `ok` fails the decision closed.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime

from django.utils import timezone

from reconcile_app.choices import ReadStatus
from reconcile_app.instants import FUTURE_TOLERANCE
from reconcile_app.models import Source
from reconcile_app.reconciliation.types import ContractSpec, FieldRead
from reconcile_app.reducers import fold, reducer_named
from reconcile_app.sources import (
    EventsAsked,
    EventsResult,
    ReadAsked,
    ReadResult,
    SourceAdapter,
    adapter_for,
    events_failing_closed,
    read_failing_closed,
)

logger = logging.getLogger(__name__)


def read_fields(
    *,
    spec: ContractSpec,
    subject: str,
    sources: dict[str, Source],
    quarantined: frozenset[str] = frozenset(),
) -> list[FieldRead]:
    """Read every contract field from its owner. Adapters turn failures into statuses.

    A quarantined source is not asked at all: its fields are `quarantined`. Live fields are
    read and event-sourced sources' events fetched together, by adapter class
    (`SourceAdapter.answer_together`: every `http` owner's call in flight at once).
    """
    asked = [f for f in spec.fields if f.source not in quarantined]
    reducer = reducer_named(spec.reducer) if spec.reducer else None
    event_sourced = sorted({f.source for f in asked if sources[f.source].mode == "event_sourced"})
    live = [(f.name, sources[f.source]) for f in asked if f.source not in event_sourced]
    events_at = timezone.now()  # the events recorded by then: replay folds the same ones
    answered, delivered = _owners_answers(
        subject, live, [sources[name] for name in event_sourced] if reducer else [], events_at
    )
    folded: dict[str, FieldRead] = {}
    for name in event_sourced:
        names = [f.name for f in spec.fields if f.source == name]
        answer = delivered.get(name)
        bound = fold_bound(events_at, answer.observed_at if answer else None)
        for read in _folded(spec, sources[name], names, answer, events_at, valid_by=bound):
            # Its owner's observed_at is its age as a live read's is: judged the same way.
            folded[read.field] = vouched_ahead_judged(read)
    reads: list[FieldRead] = []
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
                    mode=source.mode,
                )
            )
            continue
        result = answered[field_spec.name]
        read = FieldRead(
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
        reads.append(vouched_ahead_judged(read))
    return reads


def vouched_ahead_judged(read: FieldRead) -> FieldRead:
    """A read (live or folded), `stale` when its owner vouched for a moment beyond clock skew
    ahead of the read (`_vouched_ahead`); replay judges its refold so too."""
    judged = _vouched_ahead(read)
    return read if judged is None else replace(read, status=judged[0], detail=judged[1])


def _vouched_ahead(read: FieldRead) -> tuple[str, str] | None:
    """(stale, why) for an ok read whose owner vouches for a moment further ahead of our
    clock than clocks drift (`instants.FUTURE_TOLERANCE`, as for evidence), else None.

    Freshness is the decision's time minus the owner's `observed_at`: an owner whose clock
    ran a day ahead (or sent 9999) was fresh for that long, whatever the record's real age.
    Its time cannot be trusted, as a read with none cannot (it fails closed). Judged here,
    on the read, not in the engine: the snapshot stores the read as `stale`, so replay,
    which judges freshness again from the stored read, finds the same.
    """
    observed = read.observed_at
    if read.status != ReadStatus.OK or observed is None:
        return None
    if observed <= read.read_at + FUTURE_TOLERANCE:
        return None
    ahead = (observed - read.read_at).total_seconds()
    return (
        ReadStatus.STALE.value,
        f"the owner's observed_at is {ahead:.0f}s ahead of this server's clock (beyond "
        f"{FUTURE_TOLERANCE.total_seconds():.0f}s of skew): its age cannot be judged",
    )


def _owners_answers(
    subject: str, live: list[tuple[str, Source]], event_sourced: list[Source], events_at: datetime
) -> tuple[dict[str, ReadResult], dict[str, EventsResult]]:
    """Every live field's read and every event-sourced source's events, asked together by
    adapter class (the sandbox answers all of its sources' reads in two queries; `http`
    owners' calls are all in flight at once). A class whose batch raises is asked again one
    by one, so one failing owner fails only its own fields."""
    answered: dict[str, ReadResult] = {}
    delivered: dict[str, EventsResult] = {}
    adapters: dict[str, SourceAdapter] = {}
    by_class: dict[type[SourceAdapter], tuple[list[str], list[ReadAsked], list[EventsAsked]]] = {}
    for field, source in live:
        if isinstance(adapter := _adapter(adapters, source), str):
            answered[field] = ReadResult.failed(ReadStatus.UNAVAILABLE, adapter)
            continue
        fields, reads, _ = by_class.setdefault(type(adapter), ([], [], []))
        fields.append(field)
        reads.append((adapter, subject, field))
    for source in event_sourced:
        if isinstance(adapter := _adapter(adapters, source), str):
            delivered[source.name] = EventsResult(status=ReadStatus.UNAVAILABLE, detail=adapter)
            continue
        by_class.setdefault(type(adapter), ([], [], []))[2].append((adapter, subject, events_at))
    for adapter_class, (fields, reads, fetches) in by_class.items():
        try:
            read, fetched = adapter_class.answer_together(reads, fetches)
            # Inside the try: a batch that answers the wrong number of asks is a failed batch.
            class_answered = dict(zip(fields, read, strict=True))
            class_delivered = {
                adapter.source.name: result
                for (adapter, _, _), result in zip(fetches, fetched, strict=True)
            }
        except Exception:
            logger.exception("owners asked together by %s raised; asking one by one", adapter_class)
            class_answered = {
                field: read_failing_closed(*asked)
                for field, asked in zip(fields, reads, strict=True)
            }
            class_delivered = {
                asked[0].source.name: events_failing_closed(*asked) for asked in fetches
            }
        answered.update(class_answered)
        delivered.update(class_delivered)
    return answered, delivered


def _adapter(adapters: dict[str, SourceAdapter], source: Source) -> SourceAdapter | str:
    """The source's adapter, made once per reconcile, or why it could not be made (its
    fields then fail closed as `unavailable` instead of crashing the reconcile)."""
    if (adapter := adapters.get(source.name)) is not None:
        return adapter
    try:
        return adapters.setdefault(source.name, adapter_for(source))
    except Exception as exc:
        logger.exception("adapter of %s could not be made", source.name)
        return f"adapter error: {type(exc).__name__}"


def folded_reads(
    *,
    spec: ContractSpec,
    source: Source,
    subject: str,
    fields: list[str],
    recorded_before: datetime | None = None,
    valid_by: datetime | None = None,
) -> list[FieldRead]:
    """One event-sourced source's fields: its events recorded by `recorded_before` (else
    now), folded with the contract's reducer; with `valid_by`, only the events valid by then
    (replay: `fold_bound` of the stored read, or the snapshot's cut-off for `corrected`). A
    source whose adapter cannot be made fails its fields as `unavailable`."""
    # The read is "the events recorded by read_at": stored with the snapshot, it lets replay
    # fold exactly the same events.
    read_at = recorded_before or timezone.now()
    delivered = None
    if spec.reducer and reducer_named(spec.reducer):
        if isinstance(adapter := _adapter({}, source), str):
            delivered = EventsResult(status=ReadStatus.UNAVAILABLE, detail=adapter)
        else:
            delivered = events_failing_closed(adapter, subject, read_at)
    return _folded(spec, source, fields, delivered, read_at, valid_by)


def fold_bound(read_at: datetime, observed_at: datetime | None) -> datetime:
    """The latest valid time a live fold takes events for: only what holds by now (an event
    effective later, a revocation scheduled for next week, does not describe the present).
    "Now" is the later of our read time and the time the owner vouched for its answer: an
    owner whose clock runs ahead of ours stamps an event effective at once a little after
    our now, and that event holds. Only as far ahead as clocks drift (the skew evidence is
    allowed, `instants.FUTURE_TOLERANCE`): an owner vouching for next week would otherwise
    have next week's events describe today. Replay of a content-schema-4 snapshot takes the
    same bound from the read it stored (its `read_at` and `observed_at`)."""
    if observed_at is None:
        return read_at
    return max(read_at, min(observed_at, read_at + FUTURE_TOLERANCE))


def _folded(
    spec: ContractSpec,
    source: Source,
    fields: list[str],
    delivered: EventsResult | None,
    read_at: datetime,
    valid_by: datetime | None = None,
) -> list[FieldRead]:
    """The fields folded from the events `delivered` (None: not fetched, as there is no
    reducer to fold them with), or every field failed with the reason."""
    reducer = reducer_named(spec.reducer) if spec.reducer else None

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
                mode="event_sourced",
            )
            for name in fields
        ]

    if reducer is None or delivered is None:
        return failed(ReadStatus.UNAVAILABLE, f"no reducer {spec.reducer or '(none)'} to fold")
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
            mode="event_sourced",
        )
        for name in fields
    ]
