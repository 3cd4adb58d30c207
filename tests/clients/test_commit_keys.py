"""A commit call that sent nothing leaves no request of its intent in flight.

The client remembers, per commit intent, whether its last call ended without an answer: the
next call of that intent then treats a 409 `idempotency_key_in_use`, a 429 or a 503 as news of
no answer yet about its earlier request, and a run of failed connections as an outcome
unknown. A call refused every connection (the server down, the client's pool full) sent
nothing: it was reported so (TransportError, "nothing was sent; commit again with the same
key"), and committing again as told must not then be reported as an outcome unknown, nor its
throttling waited on as an earlier request of ours still being worked on.

No server: a mock transport answers (or refuses) each request.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable

import httpx
import pytest
from reconcile_client import CommitOutcomeUnknown, RateLimited, ReconcileClient, TransportError
from reconcile_client._keys import CommitKeys

SNAPSHOT = "snap_0123456789abcdef0123456789abcdef"
ACTION = "release_collections_hold"
URL = "http://reconcile.test"


def client(answer: Callable[[httpx.Request], httpx.Response]) -> ReconcileClient:
    http = httpx.Client(base_url=URL, transport=httpx.MockTransport(answer))
    return ReconcileClient(URL, "rk_test", http_client=http, commit_attempts=2)


def commit(rc: ReconcileClient) -> object:
    return rc.commit(SNAPSHOT, action=ACTION, resulting_value="released", if_match='"42"')


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("reconcile_client.client.time.sleep", lambda seconds: None)


def refused(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("connection refused", request=request)


def test_committing_again_after_nothing_was_sent_is_not_an_unknown_outcome() -> None:
    with client(refused) as rc:
        with pytest.raises(TransportError) as first:
            commit(rc)
        with pytest.raises(TransportError) as again:
            commit(rc)
    for call in (first.value, again.value):
        assert not isinstance(call, CommitOutcomeUnknown), call
        assert call.code == "connection_failed" and "nothing was sent" in call.detail
    assert again.value.idempotency_key == first.value.idempotency_key


def test_a_throttled_commit_after_nothing_was_sent_says_throttled() -> None:
    keys: list[str] = []

    def down_then_throttling(request: httpx.Request) -> httpx.Response:
        keys.append(request.headers["Idempotency-Key"])
        if len(keys) <= 2:
            raise httpx.ConnectError("connection refused", request=request)
        body = {"status": 429, "code": "throttled", "detail": "slow down"}
        return httpx.Response(429, json=body, headers={"Retry-After": "0"})

    with client(down_then_throttling) as rc:
        with pytest.raises(TransportError):
            commit(rc)
        with pytest.raises(RateLimited) as throttled:
            commit(rc)
    assert throttled.value.idempotency_key == keys[0]
    assert keys == [keys[0]] * 3  # one throttled answer, told at once, not waited on


def test_a_cancelled_call_still_makes_the_next_one_resumed_after_nothing_was_sent() -> None:
    """The rule kept: an earlier call stopped without an answer may be in flight, and a later
    call that got no connection does not forget it (an outcome unknown, not "nothing")."""
    calls: list[str] = []

    def interrupted_then_refused(request: httpx.Request) -> httpx.Response:
        calls.append(request.headers["Idempotency-Key"])
        if len(calls) == 1:
            raise KeyboardInterrupt  # stopped after the request left, before its answer
        raise httpx.ConnectError("connection refused", request=request)

    with client(interrupted_then_refused) as rc:
        with pytest.raises(KeyboardInterrupt):
            commit(rc)
        for _ in range(2):
            with pytest.raises(CommitOutcomeUnknown) as unknown:
                commit(rc)
            assert unknown.value.idempotency_key == calls[0]


def test_the_remembered_intents_do_not_hold_the_values_written() -> None:
    """A long-lived client remembers up to MOST_INTENTS (4096) intents: each must cost a key,
    not the value it wrote (up to 64 KiB each, docs/api.md "Input limits": 256 MiB)."""
    keys = CommitKeys()
    large = "x" * 65_536
    tracemalloc.start()
    try:
        for number in range(100):
            with keys.sending(
                f"snap_{number:032d}", action=ACTION, resulting_value=large, given=None
            ):
                pass
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 100 * 1024, f"{held} bytes for 100 intents"
