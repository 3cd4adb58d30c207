"""An owner's garbled answer is reported in a short detail, not quoted back whole.

h11 quotes the offending status line or header in its error (up to httpcore's 100 KiB), and
the adapter put that text into the read's, commit's, lookup's and events' detail: stored in
snapshots and effects and shown to agents (12 KB of an owner's bytes in a snapshot's field
detail, live), and into the effect's 500-character `last_check_error`.
"""

from __future__ import annotations

import pytest

from reconcile_app.models import Source
from reconcile_app.sources import ApplyOutcome, LookupOutcome, ReadStatus, adapter_for
from tests.factories import ACCOUNT, load_yaml
from tests.reconcile_app.sources.test_http import http_files, reconcile_through_http
from tests.reconcile_app.sources.test_http_guards import COMMAND, http_agent  # noqa: F401

GARBLE = "<script>" + "X" * 20_000


@pytest.fixture
def garbling_owner(db, tmp_path, stub_owner) -> Source:
    """Every answer carries a header line with no colon: no HTTP client can read it."""
    load_yaml(tmp_path, http_files(stub_owner.url))
    stub_owner.extra_headers = {"X-Fine": f"yes\r\n{GARBLE}"}
    return Source.objects.get(name="case-service-http")


def short(detail: str) -> bool:
    return "illegal header line" in detail and "XXXX" in detail and len(detail) <= 400


def test_every_call_reports_a_garbled_answer_briefly(garbling_owner, stub_owner):
    adapter = adapter_for(garbling_owner)

    read = adapter.read(ACCOUNT, "collections_status")
    applied = adapter.apply(COMMAND)
    lookup = adapter.lookup_effect(COMMAND.idempotency_key)
    events = adapter.events(ACCOUNT)
    authority = adapter.authority("baseline.math-eval")

    assert read.status == ReadStatus.UNAVAILABLE and short(read.detail)
    # Sent, and no answer anyone could read: it may have executed.
    assert applied.outcome == ApplyOutcome.UNKNOWN and short(applied.detail)
    assert lookup.outcome == LookupOutcome.UNAVAILABLE and short(lookup.detail)
    assert events.status == ReadStatus.UNAVAILABLE and short(events.detail)
    assert authority.status == ReadStatus.UNAVAILABLE and short(authority.detail)
    assert stub_owner.requests  # the calls were made: the answers were the problem


def test_a_snapshot_keeps_no_owner_bytes_beyond_the_detail(garbling_owner, http_agent):
    body = reconcile_through_http(http_agent)

    field = body["fields"]["collections_status"]
    assert field["status"] == "unavailable"
    assert short(field["detail"])
    assert body["decision"]["result"] == "refuse"
