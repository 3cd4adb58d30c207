"""`AsyncReconcileClient`: the asyncio driver of the same flows as `ReconcileClient`.

Only the driver differs (awaited httpx, asyncio.sleep); requests, parsing, errors, the commit
retry and the polling are the shared flows of `_flows.py`, so the two clients cannot drift.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from types import TracebackType
from typing import Any, TypeVar

import httpx

from reconcile_client import _flows
from reconcile_client._keys import CommitKeys
from reconcile_client._wire import UNSET, Answer, Flow, HttpRequest, NoAnswer, Reply, Sleep, decode
from reconcile_client.client import (
    DEFAULT_COMMIT_ATTEMPTS,
    DEFAULT_TIMEOUT,
    client_headers,
    no_answer,
    to_httpx,
)
from reconcile_client.models import (
    Effect,
    Escalation,
    Evidence,
    Fact,
    Me,
    Memory,
    Replay,
    ReplayMode,
    Snapshot,
)

T = TypeVar("T")


class AsyncReconcileClient:
    """`ReconcileClient` for asyncio: the same flows, methods and errors, awaited.

    >>> async with AsyncReconcileClient("http://127.0.0.1:8000", api_key) as rc:
    ...     snap = await rc.reconcile(subject="P17", purpose="fulfilment",
    ...                               decision_class="warehouse-pick",
    ...                               proposed_action="pick_pallet")
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        commit_attempts: int = DEFAULT_COMMIT_ATTEMPTS,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self._http = http_client or httpx.AsyncClient(
            base_url=base_url.rstrip("/"), headers=client_headers(api_key), timeout=timeout
        )
        self._owns_http = http_client is None
        self.commit_attempts = commit_attempts
        self._commit_keys = CommitKeys()

    async def __aenter__(self) -> AsyncReconcileClient:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def _send(self, request: HttpRequest) -> Answer | NoAnswer:
        try:
            response = await self._http.request(request.method, request.path, **to_httpx(request))
        except httpx.RequestError as exc:  # no answer, or one that cannot be decoded
            return no_answer(exc)
        return decode(response.status_code, response.headers, response.content)

    async def _run(self, flow: Flow[T]) -> T:
        reply: Reply = None
        try:
            while True:
                step = flow.send(reply)
                if isinstance(step, Sleep):
                    await asyncio.sleep(step.seconds)
                    reply = None
                else:
                    reply = await self._send(step.request)
        except StopIteration as done:
            result: T = done.value
            return result

    async def reconcile(
        self,
        *,
        subject: str,
        purpose: str,
        decision_class: str,
        proposed_action: str = "",
        claims: Sequence[Mapping[str, Any]] | None = None,
        proposed_value: Any = UNSET,
        contract_version: str | None = None,
    ) -> Snapshot:
        """Ask for a decision (POST /api/v1/reconcile). Claims are what you remember: they
        are classified, never used to authorise. Leave `proposed_value` out unless the
        snapshot should authorise that one value only."""
        return await self._run(
            _flows.reconcile(
                subject=subject,
                purpose=purpose,
                decision_class=decision_class,
                proposed_action=proposed_action,
                claims=claims,
                proposed_value=proposed_value,
                contract_version=contract_version,
            )
        )

    async def snapshot(self, snapshot_id: str) -> Snapshot:
        return await self._run(_flows.snapshot(snapshot_id))

    async def replay(self, snapshot_id: str, *, mode: ReplayMode = "as_recorded") -> Replay:
        """Decide the snapshot again (POST /api/v1/snapshots/{id}/replay): `as_recorded`, as
        it was knowable then (exact unless something is wrong), or `corrected`, under the
        corrections made since. Never asks an owner for a current value."""
        return await self._run(_flows.replay(snapshot_id, mode))

    async def commit(
        self,
        snapshot: Snapshot | str,
        *,
        action: str,
        resulting_value: Any,
        idempotency_key: str | None = None,
        if_match: str | None = None,
    ) -> Effect:
        """Commit `action` against what `snapshot` read (POST /api/v1/effects).

        If-Match comes from the snapshot (`actions[action].if_match`); the Idempotency-Key
        is yours, else the one this client sent the same commit (snapshot, action, value)
        under before, else a new uuid4, and is kept on the returned effect. A lost
        answer is sent again with the same key only (`commit_attempts`), then
        `CommitOutcomeUnknown`. A 202 (`status == "unknown"`) is returned as is: `wait` for
        it, never commit it again. A commit stopped by a cancellation, a timeout or an
        interrupt may have reached the server: what stopped it carries `.idempotency_key`.
        """
        with self._commit_keys.sending(
            snapshot, action=action, resulting_value=resulting_value, given=idempotency_key
        ) as (key, resumed):
            return await self._run(
                _flows.commit(
                    snapshot,
                    action=action,
                    resulting_value=resulting_value,
                    idempotency_key=key,
                    if_match=if_match,
                    attempts=self.commit_attempts,
                    resumed=resumed,
                )
            )

    async def effect(self, idempotency_key: str) -> Effect:
        """The effect with its timeline (GET /api/v1/effects/{key})."""
        return await self._run(_flows.effect(idempotency_key))

    async def wait(
        self, effect: Effect | str, *, timeout: float = 30.0, interval: float = 0.5
    ) -> Effect:
        """Poll until verified, postcondition_failed, rejected or not_executed; after
        `timeout` seconds, the effect as it stands (possibly still `unknown`)."""
        return await self._run(
            _flows.wait(effect, timeout=timeout, interval=interval, clock=time.monotonic)
        )

    async def current_fact(
        self, fact_key: str, *, on: date | None = None, as_of: datetime | None = None
    ) -> Fact:
        """The record the owner's rule selects for `fact_key` on a date (or as of a time)."""
        return await self._run(_flows.current_fact(fact_key, on=on, as_of=as_of))

    async def remember(
        self,
        *,
        memory_class: str,
        subject: str,
        purpose: str,
        value: Any,
        derived_from: Sequence[str],
        field: str = "",
        fact_key: str = "",
        valid_until: date | None = None,
        owner: str | None = None,
        source_revision: str = "",
        supersedes: str | None = None,
        note: str = "",
        written_at: datetime | None = None,
        memory_id: str | None = None,
    ) -> Memory:
        """Write a memory with its derivation (POST /api/v1/memories). It advises only."""
        return await self._run(
            _flows.remember(
                memory_class=memory_class,
                subject=subject,
                purpose=purpose,
                value=value,
                derived_from=list(derived_from),
                field=field,
                fact_key=fact_key,
                valid_until=valid_until,
                owner=owner,
                source_revision=source_revision,
                supersedes=supersedes,
                note=note,
                written_at=written_at,
                memory_id=memory_id,
            )
        )

    async def memories(
        self,
        *,
        subject: str = "",
        field: str = "",
        fact_key: str = "",
        memory_class: str = "",
        status: str = "",
    ) -> list[Memory]:
        """Your memories matching the filters (the first 500 the server lists): what to pass
        back as claims (`{"memory_id": ...}`) when you reconcile."""
        return await self._run(
            _flows.memories(
                subject=subject,
                field=field,
                fact_key=fact_key,
                memory_class=memory_class,
                status=status,
            )
        )

    async def attest(
        self,
        *,
        kind: str,
        subject: str,
        source: str,
        observed_at: datetime,
        field: str = "",
        value: Any = None,
        supersedes: str | None = None,
        derived_from: Sequence[str] = (),
        note: str = "",
        evidence_id: str | None = None,
    ) -> Evidence:
        """Append an evidence entry for a source you may vouch for (POST /api/v1/evidence)."""
        return await self._run(
            _flows.attest(
                kind=kind,
                subject=subject,
                source=source,
                observed_at=observed_at,
                field=field,
                value=value,
                supersedes=supersedes,
                derived_from=list(derived_from),
                note=note,
                evidence_id=evidence_id,
            )
        )

    async def escalation(self, escalation_id: str) -> Escalation:
        return await self._run(_flows.escalation(escalation_id))

    async def me(self) -> Me:
        """Who this key is, its capabilities and the decision classes it may reconcile."""
        return await self._run(_flows.me())
