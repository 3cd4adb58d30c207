"""Many tasks on one async client: a commit that never got a connection from the client's own
pool sent nothing, and is not reported as an outcome unknown.

Seen live: 200 tasks sharing one `AsyncReconcileClient` (timeout 3 s, httpx's 100
connections, a server of 2 workers): 124 commits raised `CommitOutcomeUnknown` ("PoolTimeout")
— "the effect may have happened: ask effect(key)" — and 40 of them had never reached the
server at all (no effect recorded under their key).
"""

from __future__ import annotations

import asyncio

import httpx
import pytest
from reconcile_client import AsyncReconcileClient, CommitOutcomeUnknown, Effect, TransportError
from reconcile_client.client import client_headers

from reconcile_app.models import Effect as EffectRow
from tests.clients.conftest import RELEASE, Served


def one_connection(served: Served) -> tuple[httpx.AsyncClient, AsyncReconcileClient]:
    """A client whose pool holds one connection, and waits 50 ms at most for it: its three
    attempts at a commit are over within a second."""
    http = httpx.AsyncClient(
        base_url=served.url,
        headers=client_headers(served.agent.key),
        timeout=httpx.Timeout(10.0, pool=0.05),
        limits=httpx.Limits(max_connections=1),
    )
    return http, AsyncReconcileClient(
        served.url, served.agent.key, http_client=http, commit_attempts=3
    )


def test_a_commit_that_got_no_connection_sent_nothing_and_says_so(served: Served) -> None:
    with served.client() as rc:
        snapshot = served.reconcile(rc)

    async def act() -> tuple[TransportError, Effect]:
        http, rc = one_connection(served)
        # Another task's answer, still being read, holds the one connection.
        async with http.stream("GET", "/api/v1/me"):
            with pytest.raises(TransportError) as starved:
                await rc.commit(snapshot, action=RELEASE, resulting_value="released")
        again = await rc.commit(snapshot, action=RELEASE, resulting_value="released")
        await http.aclose()
        return starved.value, again

    starved, again = asyncio.run(act())
    assert not isinstance(starved, CommitOutcomeUnknown), starved
    assert starved.code == "timeout" and "nothing was sent" in starved.detail
    key = starved.idempotency_key
    assert key is not None and again.idempotency_key == key
    assert not again.replayed and again.status in ("accepted", "verified")
    assert served.executions(key) == 1
    assert EffectRow.objects.filter(subject=served.subject).count() == 1
