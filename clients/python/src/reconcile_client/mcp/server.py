"""Reconcile as MCP tools, over stdio (`python -m reconcile_client.mcp`).

Configured by RECONCILE_URL (default http://127.0.0.1:8000) and RECONCILE_API_KEY. Each tool
takes the API's request fields and answers the API's JSON; a problem answer is a tool error
whose structured content is the problem (`status`, `code`, `detail`, and the rest of the body,
with `retry_after` in seconds when the answer's Retry-After said when to try again).

The descriptions are the point: a model reads them to learn the protocol, so they state the
rules where it will look — memory advises, state authorises; commit only what a snapshot
allows, with its If-Match; an unknown outcome is asked about, never blindly sent again.
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

DEFAULT_URL = "http://127.0.0.1:8000"

INSTRUCTIONS = """\
Reconcile is the boundary between you and the systems you act on. Memory may advise; state
must authorise. Before any action with consequences: call `reconcile` (your remembered
beliefs go in `claims`, where they are checked, never trusted), act only if the snapshot's
decision is `allow` and its `actions` map lists your action, then `commit_effect` with that
snapshot. An `unknown` outcome means nobody knows yet whether it happened: ask
`effect_status` with the same idempotency_key; never commit it again under a new key."""

RECONCILE = """\
Ask for a decision before acting. Reads the current state from each fact's owner, checks your
remembered claims against it (verdicts: confirmed, superseded, contradicted, unverified,
out_of_scope, stale_state, quarantined) and applies the decision class's policy to the state
alone. Claims never authorise anything: a confirmed claim only tells you your memory agrees.
Returns the snapshot: `decision.result` (allow | deny | escalate | refuse, with `reasons`),
`fields` (value and version per field), `claims` (a verdict per claim) and `actions` (for each
action it authorises: `field`, `if_match`, `commit_deadline`). Commit only what `actions`
lists, before its deadline; on deny or refuse, do not act; on escalate, a person decides."""

COMMIT = """\
Commit an action the snapshot allows (decision `allow`, action listed in its `actions`). The
If-Match is the snapshot's `actions[action].if_match` (taken from the snapshot when you leave
`if_match` out); the idempotency_key is made for you when absent and returned: keep it. A lost
answer is retried with the same key only. The answer's `status`: `accepted` (receipt), or
`unknown` (the owner did not answer: it may or may not have happened — call `effect_status`
with the same idempotency_key, NEVER commit again with another key). Errors you will meet:
412 version_changed (the state moved since the snapshot: reconcile again), 403
decision_not_allowed / escalation_pending, 409 snapshot_tainted / contract_superseded
(reconcile again), 423 source_quarantined (wait for people), 503 owner_unavailable (the owner
never took it: commit again with the error's idempotency_key after retry_after, never a new
key), 409 owner_refused (the owner refuses the command itself: do not retry), an error with
code commit_outcome_unknown (no answer: call `effect_status` with its idempotency_key)."""

EFFECT_STATUS = """\
Where an effect stands, by its idempotency_key: recorded, sent, accepted, rejected, unknown,
verified, postcondition_failed, not_executed, with its timeline (readbacks, resolutions). Use
it after an `unknown` outcome instead of committing again. With `wait_seconds`, polls until
the effect is final (verified, postcondition_failed, rejected, not_executed) or the time is
up; an `unknown` still unresolved then is for people to resolve."""

CURRENT_FACT = """\
The current record for an operational fact key (e.g. `baseline.math-eval`), selected by the
owner's rule: the owner and revision come from the owner's system, never from memory. A key
with no current record, an ambiguous authority or an unavailable owner answers an error with
its `candidates` (and `escalation_id` when people were asked)."""

WRITE_MEMORY = """\
Remember something, with where it came from (`derived_from`: evidence ids, snapshot ids or
memory ids; required). A memory advises future reasoning; it never authorises an action: pass
it as a claim to `reconcile` (by `memory_id`) and let the state decide. Some classes
(procedural, policy) stay `suggested` until a reviewer promotes them."""

ATTEST = """\
Append an evidence entry (an observation, a document...) for a source you may vouch for. The
ledger is append-only and hash-chained: nothing is updated or deleted; to replace an entry,
name it in `supersedes`. `observed_at` is when it was observed (RFC 3339, not in the future)."""


def result(payload: Any, *, error: bool = False) -> CallToolResult:
    """The API's JSON as structured content, and as text for clients that read only text."""
    content = dict(payload) if isinstance(payload, dict) else {"result": payload}
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(content, default=str))],
        structuredContent=content,
        isError=error,
    )


async def answer(call: Awaitable[Any]) -> CallToolResult:
    """Run one client call: its model's JSON on success, the problem as a tool error."""
    try:
        found = await call
    except ReconcileError as exc:
        return result(exc.as_dict(), error=True)
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
            )
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
