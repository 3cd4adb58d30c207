"""A reconcile asks its owners together: live reads and event fetches in one wave.

Event-sourced owners' events were fetched one source after another, and only then were the
live fields read (those at once): a contract with an event-sourced `http` owner and a live
one waited for the sum of their answers. Now every `http` call of a reconcile is in flight at
once, and an owner whose adapter cannot be made, or a class whose batch raises, fails only
its own fields.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

import pytest
from django.utils import timezone

from reconcile_app.choices import ReadStatus
from reconcile_app.models import Source
from reconcile_app.reconciliation.types import ContractSpec, FieldSpec
from reconcile_app.reducers import HARDSHIP_V3, Event
from reconcile_app.services.owner_reads import read_fields
from reconcile_app.sources import (
    EventsAsked,
    EventsResult,
    ReadAsked,
    ReadResult,
    SourceAdapter,
)
from reconcile_app.sources.http import HttpAdapter
from reconcile_app.sources.owner_client import owner_client_reset
from tests.reconcile_app.sources.conftest import StubOwner

HERE = __name__
SUBJECT = "acct-1"


def record(value: str) -> dict[str, Any]:
    now = timezone.now().isoformat()
    return {"value": value, "version": 3, "valid_from": now, "recorded_at": now,
            "observed_at": now}  # fmt: skip


def events(*kinds: str) -> dict[str, Any]:
    moment = (timezone.now() - timedelta(hours=1)).isoformat()
    return {
        "events": [
            {
                "event_id": f"e{seq}",
                "seq": seq,
                "type": kind,
                "subject": SUBJECT,
                "valid_from": moment,
                "recorded_at": moment,
            }
            for seq, kind in enumerate(kinds, start=1)
        ],
        "observed_at": timezone.now().isoformat(),
    }


def source(name: str, url: str, mode: str = "live", adapter: str = "http") -> Source:
    return Source(
        name=name, adapter=adapter, base_url=url, mode=mode, consistency="strong",
        options={"timeout_ms": 10_000},
    )  # fmt: skip


def spec(*fields: tuple[str, str]) -> ContractSpec:
    return ContractSpec(
        pk=1,
        decision_class="letters",
        version="1",
        purpose="collections",
        policy_version="p1",
        contradictions="escalate",
        commit_window_seconds=60,
        reducer=HARDSHIP_V3.label,
        content_hash="h",
        fields=tuple(FieldSpec(name, owner, True, 60, False) for name, owner in fields),
        actions={},
        rules=(),
    )


@pytest.fixture(autouse=True)
def _fresh_connections(settings):
    settings.RECONCILE_HTTP_KEEPALIVE_SECONDS = 30
    owner_client_reset()


@pytest.fixture
def owners() -> Iterator[list[StubOwner]]:
    started = [StubOwner() for _ in range(3)]
    try:
        yield started
    finally:
        for each in started:
            each.close()


def answer_once_all_asked(owners: list[StubOwner]) -> None:
    """Each owner answers only once every one has been asked: asked one after another, the
    first would wait until the barrier broke, and its call would fail."""
    everyone_asked = threading.Barrier(len(owners), timeout=5)
    for each in owners:
        each.before_answer = everyone_asked.wait


def test_http_owners_reads_and_event_fetches_are_in_flight_at_once(owners):
    owners[0].body, owners[1].body = events("PaymentMissed"), events("HardshipApproved")
    owners[2].body = record("collect")
    answer_once_all_asked(owners)
    ledgers = [HttpAdapter(source(f"ledger-{n}", owners[n].url, "event_sourced")) for n in (0, 1)]
    at = timezone.now()

    read, fetched = HttpAdapter.answer_together(
        [(HttpAdapter(source("collections", owners[2].url)), SUBJECT, "collections_status")],
        [(ledger, SUBJECT, at) for ledger in ledgers],
    )

    assert [(r.status, r.value) for r in read] == [(ReadStatus.OK, "collect")]
    assert [(f.status, [e.type for e in f.events]) for f in fetched] == [
        (ReadStatus.OK, ["PaymentMissed"]), (ReadStatus.OK, ["HardshipApproved"])
    ]  # fmt: skip
    # Each fetch asks for the events recorded by the reconcile's moment (replay folds those).
    assert all("recorded_before=" in owner.requests[0].path for owner in owners[:2])


def test_a_folded_read_is_as_of_the_moment_its_events_were_asked_for(owners):
    owners[0].body = events("PaymentMissed")
    sources = {"ledger": source("ledger", owners[0].url, "event_sourced")}

    (read,) = read_fields(spec=spec(("missed_payments", "ledger")), subject=SUBJECT,
                          sources=sources)  # fmt: skip

    # Replay folds "the events recorded by read_at": the moment sent must be that one.
    asked = parse_qs(urlsplit(owners[0].requests[0].path).query)["recorded_before"]
    assert asked == [read.read_at.isoformat()]


@pytest.mark.parametrize("reducer", ["", "no-such-reducer@1"])
def test_an_event_sourced_owner_is_not_asked_without_a_reducer_to_fold_with(owners, reducer):
    sources = {"ledger": source("ledger", owners[0].url, "event_sourced")}

    (read,) = read_fields(
        spec=replace(spec(("missed_payments", "ledger")), reducer=reducer),
        subject=SUBJECT,
        sources=sources,
    )

    assert (read.status, read.detail) == (
        ReadStatus.UNAVAILABLE, f"no reducer {reducer or '(none)'} to fold"
    )  # fmt: skip
    assert owners[0].requests == []


class HttpOwnerWithItsOwnQueries(HttpAdapter):
    """A deployer's subclass may touch the database: its calls stay on the caller's thread
    (a pool thread would open, and keep, a connection of its own)."""

    threads: ClassVar[set[str]] = set()

    def read(self, subject: str, field: str) -> ReadResult:
        self.threads.add(threading.current_thread().name)
        return ReadResult(status=ReadStatus.OK, value=field, version=1)

    def events(
        self, subject: str, after: int | None = None, recorded_before: datetime | None = None
    ) -> EventsResult:
        self.threads.add(threading.current_thread().name)
        return EventsResult(status=ReadStatus.OK)


def test_a_subclass_of_the_http_adapter_is_asked_on_the_callers_thread():
    HttpOwnerWithItsOwnQueries.threads.clear()
    owner = HttpOwnerWithItsOwnQueries(source("ledger", "http://unused/", "event_sourced"))

    read, fetched = HttpOwnerWithItsOwnQueries.answer_together(
        [(owner, SUBJECT, "a"), (owner, SUBJECT, "b")], [(owner, SUBJECT, timezone.now())]
    )

    assert [r.value for r in read] == ["a", "b"]
    assert [f.status for f in fetched] == [ReadStatus.OK]
    assert HttpOwnerWithItsOwnQueries.threads == {threading.current_thread().name}


def test_a_reconcile_reads_its_event_sourced_and_live_http_owners_at_once(owners):
    ledger, collections = owners[0], owners[1]
    ledger.body = events("PaymentMissed", "PaymentMissed")
    collections.body = record("collect")
    answer_once_all_asked([ledger, collections])
    sources = {
        "ledger": source("ledger", ledger.url, "event_sourced"),
        "collections": source("collections", collections.url),
    }

    reads = read_fields(
        spec=spec(("missed_payments", "ledger"), ("collections_status", "collections")),
        subject=SUBJECT,
        sources=sources,
    )

    assert [(r.field, r.status, r.value) for r in reads] == [
        ("missed_payments", ReadStatus.OK, 2),
        ("collections_status", ReadStatus.OK, "collect"),
    ]
    assert reads[0].detail == f"folded 2 events with {HARDSHIP_V3.label}"
    assert len(ledger.requests) == len(collections.requests) == 1


def test_an_event_sourced_source_whose_adapter_cannot_be_made_fails_alone(owners):
    owners[1].body = record("collect")
    sources = {
        "ledger": source("ledger", owners[0].url, "event_sourced", f"{HERE}.NoSuchAdapter"),
        "collections": source("collections", owners[1].url),
    }

    reads = read_fields(
        spec=spec(("missed_payments", "ledger"), ("collections_status", "collections")),
        subject=SUBJECT,
        sources=sources,
    )

    assert [(r.field, r.status, r.detail) for r in reads] == [
        ("missed_payments", ReadStatus.UNAVAILABLE, "adapter error: ImportError"),
        ("collections_status", ReadStatus.OK, ""),
    ]
    assert owners[0].requests == []


class AnswersAloneOnly(SourceAdapter):
    """An owner whose batch raises (a deployer's bug); alone, each call is answered."""

    asked: ClassVar[list[str]] = []

    @classmethod
    def answer_together(
        cls, reads: list[ReadAsked], events: list[EventsAsked]
    ) -> tuple[list[ReadResult], list[EventsResult]]:
        raise RuntimeError("batch client crashed")

    def read(self, subject: str, field: str) -> ReadResult:
        self.asked.append(field)
        return ReadResult(status=ReadStatus.OK, value="collect", version=7,
                          observed_at=timezone.now())  # fmt: skip

    def events(
        self, subject: str, after: int | None = None, recorded_before: datetime | None = None
    ) -> EventsResult:
        self.asked.append("events")
        moment = timezone.now() - timedelta(hours=1)
        missed = Event("e1", 1, "PaymentMissed", subject, "", None, moment, moment)
        return EventsResult(status=ReadStatus.OK, events=[missed])


# Only reads and events are asked here; the owner contract's other operations are not.
AnswersAloneOnly.__abstractmethods__ = frozenset()


class AnswersTooFew(AnswersAloneOnly):
    """An owner whose batch loses a read's answer (its fetches all answered): no field may
    be left without one, nor take another's."""

    @classmethod
    def answer_together(
        cls, reads: list[ReadAsked], events: list[EventsAsked]
    ) -> tuple[list[ReadResult], list[EventsResult]]:
        return [], [EventsResult(status=ReadStatus.OK) for _ in events]


@pytest.mark.parametrize("batch", ["AnswersAloneOnly", "AnswersTooFew"])
def test_a_class_whose_batch_fails_is_asked_one_call_at_a_time(batch):
    AnswersAloneOnly.asked.clear()
    path = f"{HERE}.{batch}"
    sources = {
        "ledger": source("ledger", "http://unused/", "event_sourced", path),
        "collections": source("collections", "http://unused/", adapter=path),
    }

    reads = read_fields(
        spec=spec(("missed_payments", "ledger"), ("collections_status", "collections")),
        subject=SUBJECT,
        sources=sources,
    )

    assert [(r.status, r.value) for r in reads] == [(ReadStatus.OK, 1), (ReadStatus.OK, "collect")]
    assert sorted(AnswersAloneOnly.asked) == ["collections_status", "events"]


def test_an_event_fetch_stuck_past_its_timeouts_is_answered_late(monkeypatch):
    release = threading.Event()

    def stuck(self: HttpAdapter, subject: str, **_: object) -> EventsResult:
        release.wait(10)
        return EventsResult(status=ReadStatus.OK)

    def read(self: HttpAdapter, subject: str, field: str) -> ReadResult:
        return ReadResult(status=ReadStatus.OK, value=field, version=1)

    monkeypatch.setattr(HttpAdapter, "events", stuck)
    monkeypatch.setattr(HttpAdapter, "read", read)
    owner = source("ledger", "http://owner/", "event_sourced")
    owner.options = {"timeout_ms": 200}  # answered within 2 x 0.2 + 1 s
    try:
        read_answers, fetched = HttpAdapter.answer_together(
            [(HttpAdapter(owner), SUBJECT, "status")],
            [(HttpAdapter(owner), SUBJECT, timezone.now())],
        )
    finally:
        release.set()

    assert [r.status for r in read_answers] == [ReadStatus.OK]
    assert [(f.status, f.detail) for f in fetched] == [(ReadStatus.TIMEOUT, "no answer in 1.4 s")]


def test_the_http_adapters_batch_of_none_or_one_read_stays_on_the_callers_thread(monkeypatch):
    threads: list[str] = []

    def read(self: HttpAdapter, subject: str, field: str) -> ReadResult:
        threads.append(threading.current_thread().name)
        return ReadResult(status=ReadStatus.OK, value=field, version=1)

    monkeypatch.setattr(HttpAdapter, "read", read)
    owner = HttpAdapter(source("collections", "http://unused/"))

    assert HttpAdapter.read_batch([]) == []
    assert [r.value for r in HttpAdapter.read_batch([(owner, SUBJECT, "status")])] == ["status"]
    assert threads == [threading.current_thread().name]
