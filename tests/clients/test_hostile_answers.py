"""Answers a broken or hostile server (or a proxy in front of it) may send: whatever arrives,
a commit ends in an effect, a ReconcileError carrying its Idempotency-Key, or
CommitOutcomeUnknown — never an exception of another kind, which loses the key an agent must
ask about (in the MCP server, a tool error without it)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import httpx
import pytest
from reconcile_client import ReconcileClient, errors
from reconcile_client._wire import decode
from reconcile_client.aio import AsyncReconcileClient

from tests.clients.test_flows import EFFECT, Driver, answer, commit

GARBLED = {"content-type": "application/json", "content-encoding": "gzip"}


def scripted(*answers: httpx.Response) -> Callable[[httpx.Request], httpx.Response]:
    replies = iter(answers)
    return lambda request: next(replies)


def commit_through(handler: Callable[[httpx.Request], httpx.Response], *, aio: bool) -> object:
    arguments = {"action": "release_collections_hold", "resulting_value": "released"}
    keyed = {"idempotency_key": "k-1", "if_match": '"42"'}
    if aio:

        async def run() -> object:
            http = httpx.AsyncClient(base_url="http://t", transport=httpx.MockTransport(handler))
            async with AsyncReconcileClient("http://t", "rk_x", http_client=http) as client:
                return await client.commit("snap_1", **arguments, **keyed)

        return asyncio.run(run())
    http = httpx.Client(base_url="http://t", transport=httpx.MockTransport(handler))
    with ReconcileClient("http://t", "rk_x", http_client=http) as client:
        return client.commit("snap_1", **arguments, **keyed)


@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
def test_an_answer_that_cannot_be_decoded_is_a_lost_answer(aio: bool) -> None:
    """A body whose Content-Encoding lies raised httpx.DecodingError out of commit(): the
    command may have been executed, and the caller was left without the key."""

    def garbled(request: httpx.Request | None = None) -> httpx.Response:
        return httpx.Response(201, headers=GARBLED, stream=httpx.ByteStream(b"not gzip"))

    effect = commit_through(scripted(garbled(), httpx.Response(201, json=EFFECT)), aio=aio)
    assert getattr(effect, "idempotency_key", None) == "k-1"

    with pytest.raises(errors.CommitOutcomeUnknown) as lost:
        commit_through(garbled, aio=aio)
    assert lost.value.idempotency_key == "k-1" and "DecodingError" in lost.value.detail


@pytest.mark.parametrize(
    ("said", "slept"),
    [("inf", 0.2), ("1e400", 0.2), ("nan", 0.2), ("-inf", 0.2), ("1e300", 86400.0)],
)
def test_a_retry_after_no_clock_can_wait_is_not_waited(said: str, slept: float) -> None:
    """`Retry-After: inf` (or 1e300) after a lost attempt raised OverflowError from the sleep,
    in the middle of a commit whose command may have been executed. A value that is no
    number of seconds is not one (the backoff applies); none is waited past a day."""
    lost = answer(500, {"code": "internal_error"})
    throttled = answer(429, {"code": "throttled"}, **{"Retry-After": said})
    driver = Driver([lost, throttled, answer(201, EFFECT)])
    assert commit(driver).idempotency_key == "k-1"
    assert driver.slept[1] == slept


def test_json_nested_past_the_parsers_depth_is_no_json() -> None:
    """json.loads raises RecursionError (not ValueError) on ~100,000 nested brackets."""
    deep = decode(200, {}, b"[" * 100_000)
    assert deep.body is None
    with pytest.raises(errors.ReconcileError) as refused:
        commit(Driver([deep]))
    assert refused.value.code == "unexpected_body" and refused.value.idempotency_key == "k-1"


@pytest.mark.parametrize(
    "body",
    [{"idempotency_key": "k-1"}, {**EFFECT, "timeline": "x"}],
    ids=["no-status", "timeline-not-a-list"],
)
def test_a_commits_answer_that_cannot_be_read_keeps_its_key(body: dict[str, object]) -> None:
    """The server said 2xx (the effect is recorded) but the body is not an effect: a KeyError
    or TypeError lost the key; the outcome is unknown to the caller, who asks by that key."""
    with pytest.raises(errors.CommitOutcomeUnknown) as unread:
        commit(Driver([answer(201, body)]))
    assert unread.value.idempotency_key == "k-1"
