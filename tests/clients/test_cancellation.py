"""A commit stopped after its request reached the server (a task cancelled, an
`asyncio.timeout`) leaves its caller the key, and the same commit sent again goes under it.

Seen live: a task cancelled 20 ms into `commit` raised a bare CancelledError (no key); the
effect was executed; committing the same again made a second effect record under a new key,
rejected `version_changed` by the owner: the agent was told "the state moved" about its own
write, and held no key to ask about the one that happened.

The owner takes a second to answer (a `latency` fault), so the request is at the server when
the commit is stopped. Django's ORM refuses to run inside an event loop: the world is
written between `asyncio.run` calls.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest
from reconcile_client import AsyncReconcileClient, Effect, RateLimited, ReconcileClient, Snapshot
from reconcile_client.client import client_headers

from reconcile_app.models import Effect as EffectRow
from sandbox_app.services import sandbox_fault_add
from tests.clients.conftest import RELEASE, SOURCE, Served

AT_THE_OWNER = 0.3  # seconds into the commit: sent, the owner still answering (1 s)


def read(served: Served, subject: str) -> Snapshot:
    with served.client() as rc:
        snapshot = served.reconcile(rc, subject=subject)
    assert snapshot.authorises(RELEASE)
    return snapshot


def test_a_cancelled_commit_carries_its_key_and_the_same_commit_reuses_it(
    served: Served,
) -> None:
    snapshot = read(served, served.subject)
    sandbox_fault_add(source=SOURCE, kind="latency", count=1, seconds=1)

    async def act() -> tuple[BaseException, Effect]:
        async with AsyncReconcileClient(served.url, served.agent.key) as rc:
            task = asyncio.create_task(
                rc.commit(snapshot, action=RELEASE, resulting_value="released")
            )
            await asyncio.sleep(AT_THE_OWNER)
            task.cancel()
            with pytest.raises(asyncio.CancelledError) as stopped:
                await task
            # The agent commits the same again, as it would after any failure to hear back.
            again = await rc.commit(snapshot, action=RELEASE, resulting_value="released")
            return stopped.value, again

    stopped, again = asyncio.run(act())
    key = getattr(stopped, "idempotency_key", None)
    assert key is not None and key.startswith("rc-")
    assert any(key in note for note in getattr(stopped, "__notes__", []))
    assert again.idempotency_key == key and again.replayed
    assert again.status in ("accepted", "verified")
    assert served.executions(key) == 1
    assert EffectRow.objects.filter(subject=served.subject).count() == 1


def test_a_commit_under_asyncio_timeout_leaves_the_key_on_the_timeout(served: Served) -> None:
    subject = served.account("account-timeout")
    snapshot = read(served, subject)
    sandbox_fault_add(source=SOURCE, kind="latency", count=1, seconds=1)

    async def act() -> tuple[TimeoutError, Effect]:
        async with AsyncReconcileClient(served.url, served.agent.key) as rc:
            with pytest.raises(TimeoutError) as timed_out:
                async with asyncio.timeout(AT_THE_OWNER):
                    await rc.commit(snapshot, action=RELEASE, resulting_value="released")
            again = await rc.commit(
                snapshot.snapshot_id, action=RELEASE, resulting_value="released"
            )
            return timed_out.value, again

    timed_out, again = asyncio.run(act())
    key = getattr(timed_out.__cause__, "idempotency_key", None)  # the CancelledError's
    assert key is not None and again.idempotency_key == key and again.replayed
    assert served.executions(key) == 1
    assert EffectRow.objects.filter(subject=subject).count() == 1


def test_an_explicit_key_wins_and_another_intent_gets_its_own(served: Served) -> None:
    snapshot = read(served, served.subject)
    with served.client() as rc:
        mine = rc.commit(
            snapshot, action=RELEASE, resulting_value="released", idempotency_key="k-1"
        )
        same = rc.commit(snapshot, action=RELEASE, resulting_value="released")
        assert (mine.idempotency_key, same.idempotency_key, same.replayed) == ("k-1", "k-1", True)
        other = served.account("account-other")
        fresh = rc.commit(read(served, other), action=RELEASE, resulting_value="released")
    assert fresh.idempotency_key not in ("k-1", "") and not fresh.replayed


def test_the_same_commit_with_or_without_its_if_match_is_one_intent(served: Served) -> None:
    """An MCP model passes `if_match` in one call and leaves it out in the next: the gate
    records an effect only at the version its snapshot read, so both are the one commit."""
    snapshot = read(served, served.subject)
    if_match = snapshot.actions[RELEASE].if_match
    with served.client() as rc:
        first = rc.commit(
            snapshot.snapshot_id, action=RELEASE, resulting_value="released", if_match=if_match
        )
        again = rc.commit(snapshot.snapshot_id, action=RELEASE, resulting_value="released")
    assert again.idempotency_key == first.idempotency_key and again.replayed
    assert served.executions(first.idempotency_key) == 1


def test_a_commit_answered_before_is_not_waited_on_as_if_in_flight(served: Served) -> None:
    """Only a call that got no answer leaves its request perhaps in flight: the same commit
    throttled twice is told so twice (RateLimited, its key), never waited on as its own
    request in flight and then reported an unknown outcome."""
    throttled: list[str] = []

    class ThrottledTwice(httpx.HTTPTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            if request.url.path == "/api/v1/effects" and len(throttled) < 2:
                throttled.append(request.headers["Idempotency-Key"])
                body = {"status": 429, "code": "throttled", "detail": "slow down"}
                return httpx.Response(429, json=body, headers={"Retry-After": "0"})
            return super().handle_request(request)

    snapshot = read(served, served.subject)
    http = httpx.Client(
        base_url=served.url, headers=client_headers(served.agent.key), transport=ThrottledTwice()
    )
    with ReconcileClient(served.url, served.agent.key, http_client=http) as rc:
        refusals = []
        for _ in range(2):
            with pytest.raises(RateLimited) as refused:
                rc.commit(snapshot, action=RELEASE, resulting_value="released")
            refusals.append(refused.value.idempotency_key)
        done = rc.commit(snapshot, action=RELEASE, resulting_value="released")
    http.close()
    assert throttled == refusals == [done.idempotency_key] * 2
    assert done.status in ("accepted", "verified") and not done.replayed
    assert served.executions(done.idempotency_key) == 1
