"""sandbox_app.services: versioned writes with compare-and-set, and counted faults."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from reconcile_app.errors import Conflict, NotFound, ValidationFailed
from sandbox_app.models import SandboxFault
from sandbox_app.services import (
    SandboxUnavailable,
    sandbox_fault_add,
    sandbox_faults_clear,
    sandbox_record_read,
    sandbox_record_write,
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
