"""Source adapters: how Reconcile reads from the system that owns a fact class.

An adapter is built for one `Source` row and implements the owner contract of docs/api.md. The
`http` adapter ships here and the `sandbox` one with the sandbox owner system
(`sandbox_app.adapter`); deployers register more by dotted path, either in RECONCILE_ADAPTERS
or directly as a source file's `adapter:`.
"""

from __future__ import annotations

import inspect
import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cache
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.utils.module_loading import import_string

from reconcile_app.choices import ReadStatus

if TYPE_CHECKING:
    from reconcile_app.models import Source

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReadResult:
    """What an owner answered for one (subject, field). Only `ok` results carry a value."""

    status: str
    value: Any = None
    version: int | None = None
    valid_from: datetime | None = None
    recorded_at: datetime | None = None
    observed_at: datetime | None = None
    detail: str = ""

    @classmethod
    def failed(cls, status: str, detail: str) -> ReadResult:
        return cls(status=status, detail=detail)


@dataclass(frozen=True)
class AuthorityResult:
    """The owner's own answer to "who owns this fact key, at which revision".

    `as_of` is the recorded time the answer is about (None: now). `no_history` says the
    owner keeps no authority history, so an `as_of` question cannot be answered at all;
    `none_registered` says the owner answered that it registers no authority for the key (by
    `as_of`). Neither is the owner being down, which a retry may change.
    """

    status: str  # ok | unavailable | timeout
    owner: str = ""
    source_revision: str = ""
    detail: str = ""
    as_of: datetime | None = None
    no_history: bool = False
    none_registered: bool = False

    @classmethod
    def unregistered(cls, detail: str, as_of: datetime | None = None) -> AuthorityResult:
        """The owner's answer that no authority is registered for the key (by `as_of`):
        no usable authority, like an owner that is down, but an answer a retry won't change."""
        return cls(status=ReadStatus.UNAVAILABLE, detail=detail, as_of=as_of, none_registered=True)


@dataclass(frozen=True)
class EffectCommand:
    """What is sent to the owner: the change, the version it was decided on, and the key."""

    idempotency_key: str
    subject: str
    field: str
    action: str
    resulting_value: Any
    expected_version: int


class ApplyOutcome:
    ACCEPTED = "accepted"  # the owner answered with a receipt
    REJECTED = "rejected"  # the owner answered: not executed (precondition, conflict, refusal)
    UNKNOWN = "unknown"  # sent, and no answer: it may or may not have happened


@dataclass(frozen=True)
class ApplyResult:
    outcome: str
    receipt: dict[str, Any] | None = None
    code: str = ""
    expected: int | None = None
    found: int | None = None
    detail: str = ""


class LookupOutcome:
    FOUND = "found"
    NOT_FOUND = "not_found"  # the owner's ledger says it never executed
    UNAVAILABLE = "unavailable"


@dataclass(frozen=True)
class LookupResult:
    outcome: str
    receipt: dict[str, Any] | None = None
    detail: str = ""


@dataclass(frozen=True)
class EventsResult:
    """An event-sourced owner's events for one subject, as delivered."""

    status: str  # ok | unavailable | timeout
    events: list[Any] = field(default_factory=list)  # reconcile_app.reducers.Event
    observed_at: datetime | None = None
    detail: str = ""


class SourceAdapter(ABC):
    """Base class for adapters. Subclasses implement the owner contract's operations."""

    # How long after a command was sent the owner may still execute it, for a source that
    # publishes no `execution_bound_seconds`: until then, neither its ledger nor the target
    # proves it never will (a slow owner commits after the caller has timed out). Kept long:
    # the cost of too long is an unknown outcome waiting, of too short a false not_executed.
    default_execution_bound_seconds = 300

    def __init__(self, source: Source) -> None:
        self.source = source

    def execution_bound_seconds(self) -> int:
        published = (self.source.options or {}).get("execution_bound_seconds")
        return self.default_execution_bound_seconds if published is None else int(published)

    def executes_until(self, sent_at: datetime) -> datetime:
        """When a command sent at `sent_at` can no longer run at the owner: asked after it,
        its ledger and target are final (the resolution and the console's form read this)."""
        return sent_at + timedelta(seconds=self.execution_bound_seconds())

    @abstractmethod
    def read(self, subject: str, field: str) -> ReadResult:
        """Read the current value of `field` for `subject` from the owner."""

    @classmethod
    def read_batch(cls, reads: list[tuple[SourceAdapter, str, str]]) -> list[ReadResult]:
        """Several reads of adapters of this class, (adapter, subject, field) each, answered
        in order. An owner that can answer many reads at once overrides this; by default
        each is its own `read`."""
        return [adapter.read(subject, field) for adapter, subject, field in reads]

    @classmethod
    def answer_together(
        cls, reads: list[ReadAsked], events: list[EventsAsked]
    ) -> tuple[list[ReadResult], list[EventsResult]]:
        """A reconcile's reads, (adapter, subject, field) each, and event fetches, (adapter,
        subject, recorded_before) each, of adapters of this class: their answers in order.
        Failures are statuses; a raise here makes the caller ask each one again alone.
        By default the reads go through `read_batch` (a single one through `read`) and the
        fetches one after another; an adapter whose calls can all be in flight at once
        overrides this (the `http` one)."""
        if len(reads) > 1:
            read = cls.read_batch(reads)
        else:
            read = [read_failing_closed(*asked) for asked in reads]
        return read, [events_failing_closed(*asked) for asked in events]

    @abstractmethod
    def authority(self, fact_key: str, as_of: datetime | None = None) -> AuthorityResult:
        """Ask the owner who owns `fact_key` and what its source revision is: now, or with
        `as_of` as the owner recorded it at that time.

        An owner that keeps no authority history answers an `as_of` question with
        `self.authority_history_missing(fact_key, as_of)`, never with today's authority.
        """

    def authority_history_missing(self, fact_key: str, as_of: datetime) -> AuthorityResult:
        """The answer of an owner that cannot say who owned `fact_key` at `as_of`."""
        return AuthorityResult(
            status=ReadStatus.UNAVAILABLE,
            detail=f"{self.source.name} keeps no authority history: who owned {fact_key} "
            f"at {as_of.isoformat()} cannot be asked",
            as_of=as_of,
            no_history=True,
        )

    @abstractmethod
    def apply(self, command: EffectCommand) -> ApplyResult:
        """Send the command with If-Match and Idempotency-Key; never retry inside."""

    @abstractmethod
    def lookup_effect(self, idempotency_key: str) -> LookupResult:
        """Ask the owner's effect ledger whether the command with this key executed."""

    @abstractmethod
    def events(
        self, subject: str, after: int | None = None, recorded_before: datetime | None = None
    ) -> EventsResult:
        """The subject's events (event-sourced owners), optionally as recorded by a time."""


def authority_asked(
    adapter: SourceAdapter, fact_key: str, as_of: datetime | None = None
) -> AuthorityResult:
    """`adapter.authority(fact_key, as_of)`, where an adapter whose `authority` takes no
    `as_of` (written before the owner contract had one) keeps no history: the default."""
    if as_of is None:
        return adapter.authority(fact_key)
    if not _takes_as_of(type(adapter)):
        return adapter.authority_history_missing(fact_key, as_of)
    return adapter.authority(fact_key, as_of=as_of)


@cache
def _takes_as_of(cls: type[SourceAdapter]) -> bool:
    parameters = inspect.signature(cls.authority).parameters.values()
    return any(
        parameter.name == "as_of" or parameter.kind is inspect.Parameter.VAR_KEYWORD
        for parameter in parameters
    )


# What a reconcile asks owners: a field's read, or a subject's events recorded by a time.
ReadAsked = tuple[SourceAdapter, str, str]
EventsAsked = tuple[SourceAdapter, str, datetime]


def events_failing_closed(
    adapter: SourceAdapter, subject: str, recorded_before: datetime
) -> EventsResult:
    """`adapter.events`, where an adapter that raises is `unavailable` instead of a crash."""
    try:
        return adapter.events(subject, recorded_before=recorded_before)
    except Exception as exc:
        logger.exception("adapter of %s raised fetching events of %s", adapter.source.name, subject)
        return EventsResult(
            status=ReadStatus.UNAVAILABLE, detail=f"adapter error: {type(exc).__name__}"
        )


def read_failing_closed(adapter: SourceAdapter, subject: str, field: str) -> ReadResult:
    """`adapter.read`, where an adapter that raises is `unavailable` instead of a crash."""
    try:
        return adapter.read(subject, field)
    except Exception as exc:
        logger.exception("adapter of %s raised on %s/%s", adapter.source.name, subject, field)
        return ReadResult.failed(ReadStatus.UNAVAILABLE, f"adapter error: {type(exc).__name__}")


def adapter_class_path(adapter: str) -> str:
    registry: dict[str, str] = settings.RECONCILE_ADAPTERS
    return registry.get(adapter, adapter)


def adapter_class(adapter: str) -> type[SourceAdapter]:
    """Resolve a registered name or dotted path; raises ImportError or TypeError if invalid."""
    cls = import_string(adapter_class_path(adapter))
    if not (isinstance(cls, type) and issubclass(cls, SourceAdapter)):
        raise TypeError(f"{adapter} is not a SourceAdapter subclass")
    return cls


def adapter_for(source: Source) -> SourceAdapter:
    return adapter_class(source.adapter)(source)


__all__ = [
    "AuthorityResult",
    "ReadResult",
    "ReadStatus",
    "SourceAdapter",
    "adapter_class",
    "adapter_for",
    "authority_asked",
    "events_failing_closed",
    "read_failing_closed",
]
