"""The async client runs the same flows as the sync one: the same path, the same errors.

Django's ORM refuses to run inside an event loop, so each piece that writes the world (the
owner's out-of-band change) happens between two `asyncio.run` calls.
"""

from __future__ import annotations

import asyncio

import reconcile_client as rcl
from reconcile_client import AsyncReconcileClient, Effect, Snapshot

from tests.clients.conftest import RELEASE, Served
from tests.conftest import COLLECTIONS


def test_the_async_client_walks_the_same_path(served: Served) -> None:
    async def act() -> tuple[Snapshot, Effect, Effect, Effect]:
        async with AsyncReconcileClient(served.url, served.agent.key) as rc:
            snapshot = await rc.reconcile(
                subject=served.subject,
                purpose="collections",
                decision_class=COLLECTIONS,
                proposed_action=RELEASE,
                claims=[
                    {
                        "subject": served.subject,
                        "field": "collections_status",
                        "value": "hold",
                        "note": "I think there is a hardship hold.",
                    }
                ],
            )
            effect = await rc.commit(snapshot, action=RELEASE, resulting_value="released")
            again = await rc.commit(
                snapshot,
                action=RELEASE,
                resulting_value="released",
                idempotency_key=effect.idempotency_key,
            )
            return snapshot, effect, again, await rc.wait(again, timeout=5)

    snapshot, effect, again, settled = asyncio.run(act())
    assert snapshot.decision.result == "allow"
    assert snapshot.claims[0].verdict == "contradicted"  # a memory that disagrees: kept, unused
    assert effect.status == "accepted" and again.replayed
    assert again.receipt == effect.receipt
    assert settled.status == "verified"
    assert served.executions(effect.idempotency_key) == 1


def test_the_async_client_raises_the_same_errors(served: Served) -> None:
    async def read() -> Snapshot:
        async with AsyncReconcileClient(served.url, served.agent.key) as rc:
            return await rc.reconcile(
                subject=served.subject, purpose="collections", decision_class=COLLECTIONS
            )

    async def commit(snapshot: Snapshot) -> rcl.ReconcileError:
        async with AsyncReconcileClient(served.url, served.agent.key) as rc:
            try:
                await rc.commit(snapshot, action=RELEASE, resulting_value="released")
            except rcl.ReconcileError as error:
                return error
        raise AssertionError("the commit went through")

    snapshot = asyncio.run(read())
    served.owner_writes("manual_review")
    error = asyncio.run(commit(snapshot))
    assert isinstance(error, rcl.VersionChanged)
    assert (error.status, error.code, error.expected, error.found) == (
        412,
        "version_changed",
        42,
        43,
    )
