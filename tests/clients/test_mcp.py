"""`python -m reconcile_client.mcp`, a stdio subprocess pointed at the live server by
RECONCILE_URL / RECONCILE_API_KEY, listed and called through the official MCP client SDK."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult
from reconcile_client import ReconcileClient

from reconcile_app.services.escalations import escalation_decide
from sandbox_app.services import sandbox_fault_add
from tests.clients.conftest import RELEASE, Served, client_env
from tests.conftest import COLLECTIONS, Persona

TOOLS = {
    "reconcile",
    "commit_effect",
    "effect_status",
    "current_fact",
    "write_memory",
    "attest_evidence",
    "escalation_status",
    "list_memories",
}


def structured(result: CallToolResult) -> dict[str, Any]:
    assert result.structuredContent is not None, result.content
    return dict(result.structuredContent)


def ok(result: CallToolResult) -> dict[str, Any]:
    assert not result.isError, result.content
    return structured(result)


async def session_run(served: Served, on_hold: str) -> dict[str, Any]:
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "reconcile_client.mcp"], env=client_env(served)
    )
    seen: dict[str, Any] = {}
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        seen["tools"] = {tool.name: tool for tool in listed.tools}

        ask = {"purpose": "collections", "decision_class": COLLECTIONS, "proposed_action": RELEASE}
        snapshot = ok(await session.call_tool("reconcile", {"subject": served.subject, **ask}))
        seen["snapshot"] = snapshot
        effect = ok(
            await session.call_tool(
                "commit_effect",
                {
                    "snapshot_id": snapshot["snapshot_id"],
                    "action": RELEASE,
                    "resulting_value": "released",
                },
            )
        )
        seen["effect"] = effect
        seen["settled"] = ok(
            await session.call_tool(
                "effect_status", {"idempotency_key": effect["idempotency_key"], "wait_seconds": 5}
            )
        )

        seen["bound"] = ok(
            await session.call_tool(
                "reconcile", {"subject": served.subject, **ask, "proposed_value": "released"}
            )
        )
        seen["bound_null"] = ok(
            await session.call_tool(
                "reconcile", {"subject": served.subject, **ask, "bind_null_value": True}
            )
        )
        seen["bound_twice"] = await session.call_tool(
            "reconcile",
            {"subject": served.subject, **ask, "bind_null_value": True, "proposed_value": "x"},
        )

        denied = ok(await session.call_tool("reconcile", {"subject": on_hold, **ask}))
        seen["refusal"] = await session.call_tool(
            "commit_effect",
            {"snapshot_id": denied["snapshot_id"], "action": RELEASE, "resulting_value": "x"},
        )

        observed = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
        entry = ok(
            await session.call_tool(
                "attest_evidence",
                {
                    "kind": "observation",
                    "subject": served.subject,
                    "field": "collections_status",
                    "value": "released",
                    "source": "case-ledger",
                    "observed_at": observed,
                },
            )
        )
        seen["memory"] = ok(
            await session.call_tool(
                "write_memory",
                {
                    "memory_class": "episodic",
                    "subject": served.subject,
                    "purpose": "collections",
                    "field": "collections_status",
                    "value": "released",
                    "derived_from": [entry["evidence_id"]],
                },
            )
        )
        seen["fact"] = await session.call_tool("current_fact", {"fact_key": "baseline.nothing"})
        # Arguments the tools' schemas refuse, and a tool that does not exist.
        seen["no_action"] = await session.call_tool(
            "commit_effect", {"snapshot_id": snapshot["snapshot_id"], "acton": RELEASE}
        )
        seen["claims_text"] = await session.call_tool(
            "reconcile", {"subject": served.subject, **ask, "claims": 17}
        )
        seen["no_tool"] = await session.call_tool("reconcile_everything", {})
    return seen


def test_the_mcp_server_lists_and_serves_its_tools(served: Served) -> None:
    on_hold = served.account("account-hold", status="hold")
    seen = asyncio.run(session_run(served, on_hold))

    tools = seen["tools"]
    assert set(tools) == TOOLS
    # The descriptions teach the rule where a model will read it.
    assert "Claims never authorise" in tools["reconcile"].description
    assert "NEVER commit again" in tools["commit_effect"].description
    assert "instead of committing again" in tools["effect_status"].description
    assert "never authorises an action" in tools["write_memory"].description
    arguments = tools["reconcile"].inputSchema["properties"]
    assert {"subject", "purpose", "decision_class", "proposed_action", "claims"} <= set(arguments)

    # Results are the API's own JSON answers.
    assert seen["snapshot"]["decision"]["result"] == "allow"
    assert seen["snapshot"]["actions"][RELEASE]["if_match"] == '"42"'
    assert seen["effect"]["status"] == "accepted"
    assert seen["effect"]["replayed"] is False  # a first commit, not answered from a record
    assert seen["effect"]["receipt"]["resulting_version"] == 43
    assert seen["settled"]["status"] == "verified"
    assert served.executions(seen["effect"]["idempotency_key"]) == 1
    assert seen["memory"]["status"] == "current"

    # A value is bound only when asked; null is bound by saying so (MCP has no "absent").
    assert "proposed_value" not in seen["snapshot"]
    assert seen["bound"]["proposed_value"] == "released"
    assert "proposed_value" in seen["bound_null"] and seen["bound_null"]["proposed_value"] is None
    assert seen["bound_twice"].isError
    assert structured(seen["bound_twice"])["code"] == "invalid_request"

    # Problems are structured tool errors.
    refusal = seen["refusal"]
    assert refusal.isError
    problem = structured(refusal)
    assert (problem["status"], problem["code"]) == (403, "decision_not_allowed")
    assert problem["detail"]
    fact = seen["fact"]
    assert fact.isError and structured(fact)["status"] >= 400 and structured(fact)["code"]

    # Refused arguments read as the API's refusals do: a code, and what each argument lacks.
    for name, argument in (("no_action", "action"), ("claims_text", "claims")):
        assert seen[name].isError
        refused = structured(seen[name])
        assert (refused["status"], refused["code"]) == (400, "invalid_request"), refused
        assert argument in refused["errors"] and argument in refused["detail"]
    no_tool = seen["no_tool"]
    assert no_tool.isError
    assert (structured(no_tool)["status"], structured(no_tool)["code"]) == (404, "unknown_tool")


async def status_of_nothing(served: Served, key: str) -> CallToolResult:
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "reconcile_client.mcp"], env=client_env(served, key)
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return await session.call_tool("effect_status", {"idempotency_key": "k-none"})


def test_a_key_set_with_its_newline_serves_and_never_reaches_the_model(served: Served) -> None:
    """RECONCILE_API_KEY from a secret file often ends in a newline. httpx refused the header
    and quoted it: every tool error handed the key to the model (connection_failed)."""
    result = asyncio.run(status_of_nothing(served, served.agent.key + "\n"))
    assert served.agent.key not in str(result.content)
    assert (structured(result)["status"], structured(result)["code"]) == (404, "effect_not_found")


async def commit_through_tools(served: Served, snapshot_id: str) -> CallToolResult:
    """The MCP server's own tool dispatch, in this process, against the live server."""
    from reconcile_client import AsyncReconcileClient
    from reconcile_client.mcp.server import build_server

    client = AsyncReconcileClient(served.url, served.agent.key)
    try:
        called = await build_server(client).call_tool(
            "commit_effect",
            {"snapshot_id": snapshot_id, "action": RELEASE, "resulting_value": "released"},
        )
    finally:
        await client.aclose()
    assert isinstance(called, CallToolResult)
    return called


def test_a_refusal_that_says_when_to_retry_tells_the_model_when(
    served: Served, rc: ReconcileClient
) -> None:
    """commit_effect's description says: after 503 owner_unavailable, commit again with the
    error's idempotency_key after retry_after. Retry-After is a header, and the tool error
    held only the problem's body: the model was told to wait for a number it never saw."""
    snapshot = served.reconcile(rc)
    sandbox_fault_add(source="case-service", kind="unavailable", count=1)
    refused = asyncio.run(commit_through_tools(served, snapshot.snapshot_id))
    assert refused.isError
    problem = structured(refused)
    assert (problem["status"], problem["code"]) == (503, "owner_unavailable")
    assert problem["idempotency_key"]
    assert isinstance(problem["retry_after"], float) and problem["retry_after"] > 0
    assert str(problem["retry_after"]) in refused.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("url", ["http://[::1", "127.0.0.1:8000", "localhost"])
def test_a_url_the_server_cannot_use_is_refused_at_start(url: str) -> None:
    """Like a key no header can carry: said once, on stderr, exit 2. A URL httpx cannot parse
    was a traceback; one without http(s):// started a server whose every tool call failed
    (`connection_failed`: "unsupported protocol"), told to the model instead of the person."""
    source = Path(__file__).resolve().parents[2] / "clients" / "python" / "src"
    env = {"PATH": "", "PYTHONPATH": str(source), "RECONCILE_URL": url, "RECONCILE_API_KEY": "k"}
    done = subprocess.run(
        [sys.executable, "-m", "reconcile_client.mcp"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("reconcile-mcp: RECONCILE_URL")
    assert done.stdout == ""  # the protocol channel stays clean


async def escalation_through_tools(
    served: Served, ask: dict[str, Any], decide: Any
) -> dict[str, Any]:
    """An escalation as a model meets it through the tools: the snapshot escalates, the model
    asks where the escalation stands, a person approves, the model asks again and reconciles
    again; and the model finds its memories by listing them."""
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "reconcile_client.mcp"], env=client_env(served)
    )
    seen: dict[str, Any] = {}
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        started = await session.initialize()
        listed = {tool.name: tool.description for tool in (await session.list_tools()).tools}
        seen["taught"] = {"instructions": started.instructions, "commit": listed["commit_effect"]}
        waiting = ok(await session.call_tool("reconcile", ask))
        seen["waiting"] = waiting
        asked = {"escalation_id": waiting["escalation_id"]}
        seen["open"] = ok(await session.call_tool("escalation_status", asked))
        await asyncio.to_thread(decide, waiting["escalation_id"])
        seen["approved"] = ok(await session.call_tool("escalation_status", asked))
        seen["again"] = again = ok(await session.call_tool("reconcile", ask))
        commit = {"snapshot_id": again["snapshot_id"], "action": RELEASE, "resulting_value": "x"}
        seen["committed"] = ok(await session.call_tool("commit_effect", commit))
        seen["not_there"] = await session.call_tool("escalation_status", {"escalation_id": "e-0"})
        seen["memories"] = ok(await session.call_tool("list_memories", {"subject": served.subject}))
    return seen


def test_a_model_follows_its_escalation_and_finds_its_memories_through_tools(
    served: Served, reviewer: Persona
) -> None:
    with served.client() as rc:
        _, memory = served.complaint_remembered(rc)
    served.owner_writes("open", field="complaint_status")  # the contract now escalates
    ask = {
        "subject": served.subject,
        "purpose": "collections",
        "decision_class": COLLECTIONS,
        "proposed_action": RELEASE,
    }

    def decide(escalation_id: str) -> None:
        escalation_decide(
            escalation_id=escalation_id,
            reviewer=reviewer.user,
            approve=True,
            rationale="the complaint is about another account",
        )

    seen = asyncio.run(escalation_through_tools(served, ask, decide))

    assert seen["waiting"]["decision"]["result"] == "escalate"
    assert seen["waiting"]["actions"] == {}
    assert (seen["open"]["status"], seen["open"]["write_allowed"]) == ("open", False)
    assert seen["approved"]["status"] == "approved"
    assert seen["approved"]["decided_by"] == reviewer.name
    assert seen["again"]["escalation_id"] == seen["waiting"]["escalation_id"]
    assert RELEASE in seen["again"]["actions"]
    # The approved `escalate` snapshot is committed, as the texts the model read allow: they
    # told it to commit only on `allow`, which this snapshot's decision never becomes.
    assert seen["again"]["decision"]["result"] == "escalate"
    assert seen["committed"]["approved_by"] == reviewer.name
    for taught in seen["taught"].values():
        assert "approved" in taught and "decision is `allow` and" not in taught, taught
    missing = seen["not_there"]
    assert missing.isError and structured(missing)["status"] == 404
    assert [found["memory_id"] for found in seen["memories"]["results"]] == [memory.memory_id]
