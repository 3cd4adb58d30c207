"""sandbox_app.services: versioned writes with compare-and-set, and counted faults."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from reconcile_app.errors import Conflict, NotFound, ValidationFailed
from sandbox_app.models import SandboxFault
from sandbox_app.services import (
    SandboxRead,
    SandboxUnavailable,
    sandbox_fault_add,
    sandbox_faults_clear,
    sandbox_record_read,
    sandbox_record_write,
    sandbox_records_read,
)
from tests.factories import ACCOUNT


def write(**kwargs):
    return sandbox_record_write(
        source="case-service", subject=ACCOUNT, field="collections_status", **kwargs
    )


def read():
    return sandbox_record_read(source="case-service", subject=ACCOUNT, field="collections_status")


def test_each_write_adds_one(db):
    assert [write(value=v).version for v in ("collect", "hold", "manual_review")] == [1, 2, 3]
    assert (read().value, read().version) == ("manual_review", 3)


def test_compare_and_set_refuses_a_stale_expected_version(db):
    write(value="hold", version=42)

    with pytest.raises(Conflict) as caught:
        write(value="collect", expected_version=41)

    assert (caught.value.status, caught.value.code) == (412, "version_changed")
    assert (caught.value.extra["expected"], caught.value.extra["found"]) == (41, 42)
    assert (read().value, read().version) == ("hold", 42)


def test_compare_and_set_with_the_current_version_succeeds(db):
    write(value="hold", version=42)
    assert write(value="collect", expected_version=42).version == 43


def test_versions_never_move_backwards(db):
    write(value="hold", version=42)
    with pytest.raises(ValidationFailed):
        write(value="collect", version=42)


def test_write_keeps_the_given_valid_time(db, now):
    valid_from = now - timedelta(days=3)
    assert write(value="hold", valid_from=valid_from).valid_from == valid_from


def test_counted_lag_fires_once_then_clears(db):
    write(value="hold")
    sandbox_fault_add(source="case-service", kind="lag", seconds=120, count=1)

    lagging, fresh = read(), read()

    assert (timezone.now() - lagging.observed_at).total_seconds() >= 119
    assert (timezone.now() - fresh.observed_at).total_seconds() < 5
    assert not SandboxFault.objects.exists()


def test_uncounted_unavailable_fires_until_cleared(db):
    write(value="hold")
    sandbox_fault_add(source="case-service", kind="unavailable")
    for _ in range(3):
        with pytest.raises(SandboxUnavailable):
            read()
    assert sandbox_faults_clear(source="case-service") == 1
    assert read().value == "hold"


def test_unknown_record_is_not_found(db):
    with pytest.raises(NotFound):
        read()


VALUES = {
    "text": "hold",
    "number": 12.5,
    "integer": 7,
    "flag": True,
    "nothing": None,
    "list": [1, "two", {"three": 3}],
    "object": {"limit": 100, "currency": "€", "nested": {"ok": False}},
    "numeric-text": "42",
}


def test_a_batch_read_answers_as_one_read_at_a_time(db, now):
    """Values of every JSON type, aware times, and the order asked, on both engines."""
    for field, value in VALUES.items():
        sandbox_record_write(
            source="case-service",
            subject=ACCOUNT,
            field=field,
            value=value,
            valid_from=now - timedelta(days=1),
        )
    reads = [("case-service", ACCOUNT, field) for field in reversed(VALUES)]

    batch = sandbox_records_read(reads)

    for (source, subject, field), answer in zip(reads, batch, strict=True):
        alone = sandbox_record_read(source=source, subject=subject, field=field)
        assert isinstance(answer, SandboxRead)
        assert answer.value == VALUES[field] and type(answer.value) is type(VALUES[field])
        assert (answer.value, answer.version, answer.valid_from, answer.recorded_at) == (
            alone.value,
            alone.version,
            alone.valid_from,
            alone.recorded_at,
        )
        assert answer.valid_from == now - timedelta(days=1)
        assert answer.recorded_at.tzinfo is not None


def test_a_batch_read_meets_each_sources_faults_and_missing_records(db):
    sandbox_record_write(source="case-service", subject=ACCOUNT, field="status", value="hold")
    sandbox_record_write(source="ledger-service", subject=ACCOUNT, field="status", value="open")
    sandbox_fault_add(source="ledger-service", kind="unavailable")

    healthy, faulty, missing = sandbox_records_read(
        [
            ("case-service", ACCOUNT, "status"),
            ("ledger-service", ACCOUNT, "status"),
            ("case-service", ACCOUNT, "no-such-field"),
        ]
    )

    assert isinstance(healthy, SandboxRead) and healthy.value == "hold"
    assert isinstance(faulty, SandboxUnavailable)
    assert isinstance(missing, NotFound)
    assert sandbox_records_read([]) == []
