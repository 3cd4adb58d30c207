"""A `commit_effect` tool call cancelled by the MCP client (`notifications/cancelled`) while
its request is at the server: the model learns only "Request cancelled" (the SDK answers the
cancelled request, and a client ignores what follows), so the way back to the commit is
calling `commit_effect` again with the same arguments, which the descriptions must say, and
which must go under the same key: one effect, never a second one.

Seen live: the retry went under a new key; the cancelled request, still waiting on the owner,
was then refused by the owner's compare-and-set and recorded as a second, rejected effect.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError
from mcp.types import CancelledNotification, CancelledNotificationParams, ClientNotification

from reconcile_app.models import Effect
from sandbox_app.services import sandbox_fault_add
from tests.clients.conftest import RELEASE, SOURCE, Served, client_env

AT_THE_OWNER = 0.5  # seconds into the call: at the server, the owner still answering (2 s)


async def cancel_then_retry(served: Served, snapshot_id: str) -> dict[str, Any]:
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "reconcile_client.mcp"], env=client_env(served)
    )
    seen: dict[str, Any] = {}
    arguments = {"snapshot_id": snapshot_id, "action": RELEASE, "resulting_value": "released"}
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        seen["descriptions"] = {name: tool.description for name, tool in tools.items()}
        request_id = session._request_id  # the id the next request is sent with
        call = asyncio.create_task(session.call_tool("commit_effect", arguments))
        await asyncio.sleep(AT_THE_OWNER)
        params = CancelledNotificationParams(requestId=request_id, reason="the user stopped it")
        await session.send_notification(ClientNotification(CancelledNotification(params=params)))
        try:
            seen["cancelled"] = await call
        except McpError as told:
            seen["cancelled"] = told.error.message
        again = await session.call_tool("commit_effect", arguments)
        assert not again.isError, again.content
        seen["again"] = dict(again.structuredContent or {})
    return seen


def test_a_cancelled_commit_effect_called_again_is_the_same_commit(served: Served) -> None:
    with served.client() as rc:
        snapshot = served.reconcile(rc)
    sandbox_fault_add(source=SOURCE, kind="latency", count=1, seconds=2)

    seen = asyncio.run(cancel_then_retry(served, snapshot.snapshot_id))

    assert seen["cancelled"] == "Request cancelled"  # all the model hears of the first call
    key = seen["again"]["idempotency_key"]
    assert seen["again"]["status"] in ("accepted", "verified")
    # Answered from the record of the cancelled call, and the model is told so.
    assert seen["again"]["replayed"] is True
    assert list(Effect.objects.filter(subject=served.subject).values_list("idempotency_key")) == [
        (key,)
    ]
    assert served.executions(key) == 1
    # What the model reads says so, where it will look.
    commit = seen["descriptions"]["commit_effect"]
    assert "cancelled" in commit and "exactly the same arguments" in commit
