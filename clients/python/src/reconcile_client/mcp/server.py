"""Reconcile as MCP tools, over stdio (`python -m reconcile_client.mcp`).

Configured by RECONCILE_URL (default http://127.0.0.1:8000) and RECONCILE_API_KEY. Each tool
takes the API's request fields and answers the API's JSON; a problem answer is a tool error
whose structured content is the problem (`status`, `code`, `detail`, and the rest of the body,
with `retry_after` in seconds when the answer's Retry-After said when to try again).

The descriptions are the point: a model reads them to learn the protocol
(`mcp/descriptions.py`).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Sequence
from contextlib import asynccontextmanager
from datetime import date, datetime
from typing import Annotated, Any

import httpx
from mcp.server.fastmcp import FastMCP
from mcp.types import CallToolResult, ContentBlock, TextContent
from pydantic import Field, ValidationError

from reconcile_client._wire import UNSET
from reconcile_client.aio import AsyncReconcileClient
from reconcile_client.errors import ReconcileError
from reconcile_client.mcp.descriptions import (
    ATTEST,
    COMMIT,
    CURRENT_FACT,
    EFFECT_STATUS,
    ESCALATION_STATUS,
    INSTRUCTIONS,
    LIST_MEMORIES,
    RECONCILE,
    WRITE_MEMORY,
)

DEFAULT_URL = "http://127.0.0.1:8000"


def result(payload: Any, *, error: bool = False) -> CallToolResult:
    """The API's JSON as structured content, and as text for clients that read only text."""
    content = dict(payload) if isinstance(payload, dict) else {"result": payload}
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(content, default=str))],
        structuredContent=content,
        isError=error,
    )


async def answer(call: Awaitable[Any], *, says_replayed: bool = False) -> CallToolResult:
    """Run one client call: its model's JSON on success (a list as the API lists it, under
    `results`), the problem as a tool error. `says_replayed`: a commit's answer adds
    `replayed`, which the API says in a header (`Idempotent-Replayed`) the model never sees:
    true when the server answered from its record of an earlier call under the same key (a
    commit called again after a cancellation finds its first call so)."""
    try:
        found = await call
    except ReconcileError as exc:
        return result(exc.as_dict(), error=True)
    if isinstance(found, list):
        return result({"results": [dict(item.raw) for item in found]})
    if says_replayed:
        return result({**found.raw, "replayed": bool(found.replayed)})
    return result(dict(found.raw))


def arguments_refused(refusal: ValidationError) -> CallToolResult:
    """Arguments the tool's schema refuses, as the API refuses a body: 400 `invalid_request`
    with `errors` by argument, so a model reads a code whatever refused it. (FastMCP's own
    answer is a line of text: "Error executing tool …: 1 validation error for …".)"""
    errors: dict[str, list[str]] = {}
    for error in refusal.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        errors.setdefault(where, []).append(str(error["msg"]))
    detail = "; ".join(f"{where}: {' '.join(messages)}" for where, messages in errors.items())
    return result(
        {"status": 400, "code": "invalid_request", "detail": detail, "errors": errors}, error=True
    )


class ReconcileMCP(FastMCP):
    """FastMCP whose refusals of a call carry a `code`, as every answer of the API does."""

    async def call_tool(  # type: ignore[override]
        self, name: str, arguments: dict[str, Any]
    ) -> Sequence[ContentBlock] | dict[str, Any] | CallToolResult:
        tool = self._tool_manager.get_tool(name)
        if tool is None:
            return result(
                {"status": 404, "code": "unknown_tool", "detail": f"no tool named {name!r}"},
                error=True,
            )
        # The arguments as FastMCP will take them, checked first, so that only their refusal
        # (never an error inside a tool) is answered as one.
        metadata = tool.fn_metadata
        try:
            metadata.arg_model.model_validate(metadata.pre_parse_json(arguments))
        except ValidationError as refused:
            return arguments_refused(refused)
        return await super().call_tool(name, arguments)


def build_server(client: AsyncReconcileClient) -> FastMCP:
    @asynccontextmanager
    async def lifespan(_: FastMCP) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await client.aclose()

    # WARNING: stderr is for a person reading a log, not for every request served.
    server = ReconcileMCP(
        "reconcile", instructions=INSTRUCTIONS, lifespan=lifespan, log_level="WARNING"
    )

    @server.tool(name="reconcile", description=RECONCILE)
    async def reconcile(
        subject: str,
        purpose: str,
        decision_class: str,
        proposed_action: str = "",
        claims: Annotated[
            list[dict[str, Any]] | None,
            Field(
                description="what you remember: {subject, field, value, written_at, "
                "memory_class, derived_from, note} or {memory_id}"
            ),
        ] = None,
        proposed_value: Annotated[
            Any, Field(description="bind the one value the commit will write (omit: none)")
        ] = None,
        bind_null_value: Annotated[
            bool,
            Field(description="true: the value bound is null (proposed_value null means none)"),
        ] = False,
        contract_version: str | None = None,
    ) -> CallToolResult:
        # MCP has no "absent" beside null, so a null proposed_value binds nothing; a commit
        # that clears a field binds null by saying so.
        if bind_null_value and proposed_value is not None:
            return result(
                {
                    "status": 400,
                    "code": "invalid_request",
                    "detail": "bind_null_value binds null: leave proposed_value out",
                },
                error=True,
            )
        return await answer(
            client.reconcile(
                subject=subject,
                purpose=purpose,
                decision_class=decision_class,
                proposed_action=proposed_action,
                claims=claims,
                proposed_value=(
                    None if bind_null_value else UNSET if proposed_value is None else proposed_value
                ),
                contract_version=contract_version,
            )
        )

    @server.tool(name="commit_effect", description=COMMIT)
    async def commit_effect(
        snapshot_id: str,
        action: str,
        resulting_value: Any,
        idempotency_key: Annotated[
            str | None, Field(description="reuse it to retry; never a new one for the same intent")
        ] = None,
        if_match: Annotated[
            str | None, Field(description="the snapshot's actions[action].if_match, e.g. '\"42\"'")
        ] = None,
    ) -> CallToolResult:
        return await answer(
            client.commit(
                snapshot_id,
                action=action,
                resulting_value=resulting_value,
                idempotency_key=idempotency_key,
                if_match=if_match,
            ),
            says_replayed=True,
        )

    @server.tool(name="effect_status", description=EFFECT_STATUS)
    async def effect_status(
        idempotency_key: str,
        wait_seconds: Annotated[float, Field(ge=0, le=120)] = 0,
    ) -> CallToolResult:
        if wait_seconds > 0:
            return await answer(client.wait(idempotency_key, timeout=wait_seconds))
        return await answer(client.effect(idempotency_key))

    @server.tool(name="current_fact", description=CURRENT_FACT)
    async def current_fact(
        fact_key: str,
        on: Annotated[date | None, Field(description="YYYY-MM-DD (default today)")] = None,
        as_of: Annotated[
            datetime | None, Field(description="RFC 3339: as it was knowable then")
        ] = None,
    ) -> CallToolResult:
        return await answer(client.current_fact(fact_key, on=on, as_of=as_of))

    @server.tool(name="escalation_status", description=ESCALATION_STATUS)
    async def escalation_status(escalation_id: str) -> CallToolResult:
        return await answer(client.escalation(escalation_id))

    @server.tool(name="list_memories", description=LIST_MEMORIES)
    async def list_memories(
        subject: str = "",
        field: str = "",
        fact_key: str = "",
        memory_class: str = "",
        status: str = "",
    ) -> CallToolResult:
        return await answer(
            client.memories(
                subject=subject,
                field=field,
                fact_key=fact_key,
                memory_class=memory_class,
                status=status,
            )
        )

    @server.tool(name="write_memory", description=WRITE_MEMORY)
    async def write_memory(
        memory_class: str,
        subject: str,
        purpose: str,
        value: Any,
        derived_from: list[str],
        field: str = "",
        fact_key: str = "",
        valid_until: date | None = None,
        owner: str | None = None,
        source_revision: str = "",
        supersedes: str | None = None,
        note: str = "",
        written_at: datetime | None = None,
    ) -> CallToolResult:
        return await answer(
            client.remember(
                memory_class=memory_class,
                subject=subject,
                purpose=purpose,
                value=value,
                derived_from=derived_from,
                field=field,
                fact_key=fact_key,
                valid_until=valid_until,
                owner=owner,
                source_revision=source_revision,
                supersedes=supersedes,
                note=note,
                written_at=written_at,
            )
        )

    @server.tool(name="attest_evidence", description=ATTEST)
    async def attest_evidence(
        kind: str,
        subject: str,
        source: str,
        observed_at: datetime,
        field: str = "",
        value: Any = None,
        supersedes: str | None = None,
        derived_from: list[str] | None = None,
        note: str = "",
        evidence_id: str | None = None,
    ) -> CallToolResult:
        return await answer(
            client.attest(
                kind=kind,
                subject=subject,
                source=source,
                observed_at=observed_at,
                field=field,
                value=value,
                supersedes=supersedes,
                derived_from=derived_from or (),
                note=note,
                evidence_id=evidence_id,
            )
        )

    return server


def main() -> None:
    api_key = os.environ.get("RECONCILE_API_KEY", "")
    if not api_key:
        # stdout is the protocol channel: the complaint goes to stderr.
        print("reconcile-mcp: set RECONCILE_API_KEY (and RECONCILE_URL)", file=sys.stderr)
        raise SystemExit(2)
    url = os.environ.get("RECONCILE_URL", DEFAULT_URL)
    if not url.lower().startswith(("http://", "https://")):
        # Else every tool call would fail alike (an unsupported protocol), told to the model
        # rather than to the person configuring the server.
        print(f"reconcile-mcp: RECONCILE_URL must be an http(s) URL, not {url!r}", file=sys.stderr)
        raise SystemExit(2)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    try:
        client = AsyncReconcileClient(url, api_key)
    except ValueError as refused:  # a key no header can carry; the message never repeats it
        print(f"reconcile-mcp: RECONCILE_API_KEY: {refused}", file=sys.stderr)
        raise SystemExit(2) from None
    except httpx.InvalidURL as refused:
        print(f"reconcile-mcp: RECONCILE_URL {url!r}: {refused}", file=sys.stderr)
        raise SystemExit(2) from None
    build_server(client).run(transport="stdio")
