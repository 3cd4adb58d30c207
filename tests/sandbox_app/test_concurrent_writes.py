"""Operators' and drills' writes to one sandbox record, and appends to one source's events, at
once (PostgreSQL: real row locks and a real unique index).

A PUT states no version: "each write adds one" (docs/api.md). Read without a lock, two writes
at once both meant the same next version; the loser was answered 412 `version_changed`, a
precondition nobody set, and two first writes of a record broke its unique index (500).

An event appended without `seq` goes after the source's last one: two at once both read the
same last one and shared a `seq`, which the reducer folds into a `conflict` (events that
cannot be ordered), so a required field read from that source failed closed."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, connections

from sandbox_app.models import SandboxEvent, SandboxRecord
from sandbox_app.services import sandbox_event_append, sandbox_record_write

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]

WRITERS = 12


def at_once(call: Callable[[int], Any]) -> list[str]:
    """`call(index)` in WRITERS threads released together; what each raised, if anything."""
    barrier = threading.Barrier(WRITERS)
    errors: list[str] = []

    def run(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            call(index)
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(index,)) for index in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return errors


def test_writes_at_once_to_a_new_record_each_add_one_version():
    errors = at_once(
        lambda index: sandbox_record_write(
            source="case-service", subject="account-90", field="collections_status", value=index
        )
    )

    assert errors == []
    assert SandboxRecord.objects.get(subject="account-90").version == WRITERS


def test_writes_at_once_to_a_record_state_no_precondition_and_meet_none():
    sandbox_record_write(
        source="case-service", subject="account-91", field="collections_status", value="collect"
    )

    errors = at_once(
        lambda index: sandbox_record_write(
            source="case-service", subject="account-91", field="collections_status", value=index
        )
    )

    assert errors == []
    assert SandboxRecord.objects.get(subject="account-91").version == 1 + WRITERS


def test_events_appended_at_once_without_seq_each_go_after_the_last():
    errors = at_once(
        lambda index: sandbox_event_append(
            source="hardship-ledger", event_id=f"ev-{index}", type="payment_missed", subject="a-9"
        )
    )

    assert errors == []
    seqs = sorted(SandboxEvent.objects.filter(subject="a-9").values_list("seq", flat=True))
    assert seqs == list(range(1, WRITERS + 1))
