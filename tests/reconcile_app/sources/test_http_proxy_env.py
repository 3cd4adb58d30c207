"""A process whose proxy variables httpx cannot use refuses owner calls; it never crashes.

httpx reads HTTP_PROXY, HTTPS_PROXY and ALL_PROXY when the process's client for owner calls
is made, and raises for one it cannot use (a socks5 proxy without the socksio package, an
unknown scheme, a malformed URL). That raised out of every owner call: a commit through a
web process so configured answered 500 and left its effect `sent` until the sweep.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from reconcile_app.models import Effect
from reconcile_app.sources import ApplyOutcome, LookupOutcome, ReadStatus
from reconcile_app.sources.owner_client import owner_client_reset
from tests.factories import ACCOUNT
from tests.reconcile_app.sources.test_http import reconcile_through_http, record
from tests.reconcile_app.sources.test_http_guards import COMMAND, adapter, http_agent  # noqa: F401

UNUSABLE = [
    ("ALL_PROXY", "socks5://127.0.0.1:1080"),  # the socksio package is not installed
    ("HTTPS_PROXY", "ftp://proxy.internal"),
    ("HTTP_PROXY", "http://proxy.internal:port"),
]


@pytest.fixture
def unusable_proxy(request, monkeypatch) -> Iterator[Callable[[], None]]:
    """Sets the proxy variable after the test's setup, as a process started so would see it."""

    def set_it() -> None:
        for name, _ in UNUSABLE:
            for spelling in (name, name.lower()):
                monkeypatch.delenv(spelling, raising=False)
        monkeypatch.setenv(*request.param)
        owner_client_reset()

    yield set_it
    monkeypatch.undo()
    owner_client_reset()


@pytest.mark.parametrize("unusable_proxy", UNUSABLE, indirect=True, ids=[n for n, _ in UNUSABLE])
def test_every_owner_call_is_refused_before_sending(adapter, stub_owner, unusable_proxy, caplog):
    stub_owner.body = record()
    unusable_proxy()

    read = adapter.read(ACCOUNT, "collections_status")
    applied = adapter.apply(COMMAND)
    lookup = adapter.lookup_effect(COMMAND.idempotency_key)
    events = adapter.events(ACCOUNT)
    authority = adapter.authority("baseline.math-eval")

    assert read.status == ReadStatus.UNAVAILABLE
    assert "client for owner calls cannot be made" in read.detail
    assert (applied.outcome, applied.code) == (ApplyOutcome.REJECTED, "owner_unavailable")
    assert "nothing was sent" in applied.detail
    assert lookup.outcome == LookupOutcome.UNAVAILABLE
    assert events.status == ReadStatus.UNAVAILABLE
    assert authority.status == ReadStatus.UNAVAILABLE
    assert stub_owner.requests == []
    assert "client for owner calls cannot be made" in caplog.text


@pytest.mark.parametrize("unusable_proxy", UNUSABLE[:1], indirect=True, ids=["ALL_PROXY"])
def test_a_commit_on_a_process_that_cannot_call_owners_is_rejected_not_a_500(
    adapter, stub_owner, http_agent, unusable_proxy
):
    # Decided on a process that could call the owner, committed on one that cannot (a web
    # host restarted with the variable set).
    stub_owner.body = record()
    snapshot = reconcile_through_http(http_agent)
    unusable_proxy()

    response = http_agent.post(
        "/api/v1/effects",
        {
            "snapshot_id": snapshot["snapshot_id"],
            "action": "retain_manual_review",
            "resulting_value": "manual_review",
        },
        HTTP_IDEMPOTENCY_KEY="proxy-1",
        HTTP_IF_MATCH='"9"',
    )

    assert response.status_code == 503, response.content
    assert response.json()["code"] == "owner_unavailable"
    assert Effect.objects.get(idempotency_key="proxy-1").status == "rejected"
    assert [r.method for r in stub_owner.requests] == ["GET"]
