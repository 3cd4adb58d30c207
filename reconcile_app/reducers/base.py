"""What a reducer is, how events are folded, and the registry shipped reducers join."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise
from typing import Any

from reconcile_app.canonical import same_value


@dataclass(frozen=True)
class Event:
    event_id: str
    seq: int
    type: str
    subject: str
    field: str
    value: Any
    valid_from: datetime
    recorded_at: datetime


@dataclass
class Folded:
    status: str  # ok | conflict
    values: dict[str, Any] = field(default_factory=dict)
    inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    applied: list[str] = field(default_factory=list)
    last_seq: int | None = None
    valid_from: datetime | None = None
    recorded_at: datetime | None = None
    detail: str = ""


@dataclass(frozen=True)
class Reducer:
    name: str
    version: str
    fields: tuple[str, ...]
    ordering_key: str
    apply: Callable[[dict[str, Any], Event], None]
    initial: Callable[[], dict[str, Any]]
    derive: Callable[[dict[str, Any]], tuple[dict[str, Any], dict[str, dict[str, Any]]]]
    # The event types `apply` understands (others are ignored). Declared so a contract's
    # release gate can build event histories for the history-substitution check (seed 002)
    # without knowing the reducer: a reducer that declares none cannot pass that gate.
    event_types: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.name}@{self.version}"


def _same_delivery(first: Event, again: Event) -> bool:
    """Dataclass equality, but with JSON's for the value: Python finds 1 == True == 1.0."""
    return _delivered_as(first) == _delivered_as(again) and same_value(first.value, again.value)


def _delivered_as(event: Event) -> tuple[Any, ...]:
    return (event.seq, event.type, event.subject, event.field, event.valid_from, event.recorded_at)


def fold(reducer: Reducer, events: Iterable[Event]) -> Folded:
    unique: dict[str, Event] = {}
    differing: set[str] = set()
    for event in events:
        # Idempotent: a redelivery changes nothing. An id delivered with another content is
        # no redelivery, and keeping whichever came first would let delivery order decide.
        if not _same_delivery(unique.setdefault(event.event_id, event), event):
            differing.add(event.event_id)
    if differing:
        first = min(differing)
        return Folded(
            status="conflict",
            detail=f"event {first} was delivered with two different contents",
        )
    ordered = sorted(unique.values(), key=lambda e: (getattr(e, reducer.ordering_key), e.event_id))
    for earlier, later in pairwise(ordered):
        if getattr(earlier, reducer.ordering_key) == getattr(later, reducer.ordering_key):
            return Folded(
                status="conflict",
                detail=(
                    f"events {earlier.event_id} and {later.event_id} share "
                    f"{reducer.ordering_key} {getattr(later, reducer.ordering_key)}: they "
                    "cannot be ordered"
                ),
            )
    state = reducer.initial()
    for event in ordered:
        reducer.apply(state, event)
    values, inputs = reducer.derive(state)
    last = ordered[-1] if ordered else None
    return Folded(
        status="ok",
        values=values,
        inputs=inputs,
        applied=[event.event_id for event in ordered],
        last_seq=last.seq if last else 0,
        valid_from=last.valid_from if last else None,
        recorded_at=last.recorded_at if last else None,
    )


REGISTRY: dict[str, Reducer] = {}


def register(reducer: Reducer) -> Reducer:
    REGISTRY[reducer.label] = reducer
    return reducer
