"""The soak's load: agents acting through the Python client, and the harness's operator.

Each agent works a few accounts of its own on the demo collections contract. A step puts at
most one request on the wire (the client's own retries of a lost answer aside): reconcile an
account, commit what the snapshot allows (with an Idempotency-Key it keeps across retries),
or ask about an effect still in flight. An account with an effect in flight is left alone
until that effect is final, as an agent waiting for its readback would; an account the
contract keeps refusing (a contradiction after a dropped write, say) is replaced by a fresh
one, which the harness opens as an operator: two sandbox writes and an observation.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from random import Random
from typing import Any

import httpx
from reconcile_client import ReconcileError, Snapshot
from reconcile_client.aio import AsyncReconcileClient
from reconcile_client.errors import (
    IdempotencyKeyInUse,
    OwnerUnavailable,
    TransportError,
    Unavailable,
)

from drills_app.soak.estate import DECISION_CLASS
from drills_app.soak.traffic import Traffic

SOURCE = "case-service"
FIELD = "collections_status"
PURPOSE = "collections"
# From what the account holds, the action that changes it and the value it writes.
NEXT_ACTION = {
    "collect": ("retain_manual_review", "manual_review"),
    "manual_review": ("release_collections_hold", "collect"),
}
SUBJECTS_PER_AGENT = 3
# An effect in flight is asked about after 2 s, then less and less often (as the client's
# `wait` does), so slow readbacks do not turn into a flood of polls.
POLL_BACKOFF_SECONDS = (2.0, 4.0, 8.0, 15.0)
REFUSALS_BEFORE_REPLACING = 3
SAME_KEY_RETRIES = 3
CLIENT_TIMEOUT_SECONDS = 30.0
FINAL = frozenset({"verified", "postcondition_failed", "rejected", "not_executed"})


def _hooked_http(url: str, key: str, who: str, traffic: Traffic) -> httpx.AsyncClient:
    """An httpx client that records every answer (and every request left unanswered)."""

    async def on_response(response: httpx.Response) -> None:
        await response.aread()
        try:
            body: Any = response.json() if response.status_code >= 400 else None
        except ValueError:
            body = None
        traffic.answered(
            who=who,
            method=response.request.method,
            path=response.request.url.path,
            status=response.status_code,
            seconds=response.elapsed.total_seconds(),
            body=body,
        )

    return httpx.AsyncClient(
        base_url=url,
        headers={"Authorization": f"Bearer {key}", "Accept": "application/json"},
        timeout=CLIENT_TIMEOUT_SECONDS,
        event_hooks={"response": [on_response]},
    )


class Owner:
    """The harness as an operator: opens accounts at the sandbox owner, injects faults."""

    def __init__(self, url: str, token: str, traffic: Traffic) -> None:
        self.http = _hooked_http(url, token, "harness", traffic)
        self.traffic = traffic

    async def _send(self, method: str, path: str, body: Any = None) -> httpx.Response:
        try:
            response = await self.http.request(method, path, json=body)
        except httpx.HTTPError:
            self.traffic.unanswered(method=method, path=path)
            raise
        response.raise_for_status()
        return response

    async def account_open(self, subject: str) -> None:
        """An account that collections may act on: collectable, no complaint, evidenced."""
        base = "/api/v1/sandbox"
        await self._send("PUT", f"{base}/{SOURCE}/records/{subject}/{FIELD}", {"value": "collect"})
        await self._send(
            "PUT",
            f"{base}/complaints-service/records/{subject}/complaint_status",
            {"value": "none"},
        )
        await self._send(
            "POST",
            "/api/v1/evidence",
            {
                "kind": "observation",
                "subject": subject,
                "field": FIELD,
                "value": "collect",
                "source": "case-ledger",
                "observed_at": datetime.now(UTC).isoformat(),
                "note": "opened by the soak",
            },
        )

    async def fault(self, kind: str, count: int, seconds: int) -> None:
        body = {"kind": kind, "count": count, "seconds": seconds}
        await self._send("POST", f"/api/v1/sandbox/{SOURCE}/faults", body)

    async def faults_clear(self) -> None:
        await self._send("DELETE", f"/api/v1/sandbox/{SOURCE}/faults")

    async def aclose(self) -> None:
        await self.http.aclose()


@dataclass
class Account:
    subject: str
    believed: str = "collect"
    in_flight: str | None = None  # the key of an effect not yet final
    polled_at: float = 0.0
    polls: int = 0

    def poll_due(self, now: float) -> bool:
        wait = POLL_BACKOFF_SECONDS[min(self.polls, len(POLL_BACKOFF_SECONDS) - 1)]
        return self.in_flight is not None and now - self.polled_at >= wait

    def wait_for(self, key: str) -> None:
        self.in_flight, self.polled_at, self.polls = key, time.monotonic(), 0

    refusals: int = 0


@dataclass
class PlannedCommit:
    account: Account
    snapshot: Snapshot
    action: str
    value: str
    key: str
    retries: int = 0
    not_before: float = 0.0  # a retry waits for the server's Retry-After


@dataclass
class Agent:
    name: str
    key: str
    url: str
    tag: str
    traffic: Traffic
    owner: Owner
    rng: Random
    accounts: list[Account] = field(default_factory=list)
    planned: PlannedCommit | None = None
    opened: int = 0
    commits: int = 0
    client: AsyncReconcileClient | None = None

    async def open_accounts(self) -> None:
        for _ in range(SUBJECTS_PER_AGENT):
            self.accounts.append(await self._account_new())

    async def _account_new(self) -> Account:
        self.opened += 1
        subject = f"soak-{self.tag}-{self.name.rsplit('-', 1)[-1]}-{self.opened}"
        await self.owner.account_open(subject)
        return Account(subject=subject)

    async def run(self, stop: asyncio.Event, interval: float) -> None:
        http = _hooked_http(self.url, self.key, "agents", self.traffic)
        self.client = AsyncReconcileClient(self.url, self.key, http_client=http)
        try:
            # Agents start spread over one interval, not all in the same instant.
            await asyncio.sleep(self.rng.uniform(0, interval))
            while not stop.is_set():
                started = time.monotonic()
                try:
                    await self.step()
                except ReconcileError:
                    pass  # already counted by the hook; the next step goes on
                except httpx.HTTPError:
                    pass
                pause = interval * self.rng.uniform(0.8, 1.2) - (time.monotonic() - started)
                if pause > 0:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), timeout=pause)
        finally:
            await http.aclose()

    async def step(self) -> None:
        now = time.monotonic()
        if self.planned is not None and now >= self.planned.not_before:
            await self._commit(self.planned)
            return
        due = [account for account in self.accounts if account.poll_due(now)]
        # While a commit waits to be sent again, no other decision is taken.
        free = [a for a in self.accounts if a.in_flight is None] if self.planned is None else []
        if due and (not free or self.rng.random() < 0.5):
            await self._poll(due[0])
        elif free:
            await self._reconcile(self.rng.choice(free))

    async def _reconcile(self, account: Account) -> None:
        assert self.client is not None
        action, value = NEXT_ACTION.get(account.believed, NEXT_ACTION["collect"])
        try:
            snapshot = await self.client.reconcile(
                subject=account.subject,
                purpose=PURPOSE,
                decision_class=DECISION_CLASS,
                proposed_action=action,
                proposed_value=value,
            )
        except ReconcileError:
            return
        read = snapshot.fields.get(FIELD)
        if read is not None and read.value in NEXT_ACTION:
            account.believed = read.value  # learnt for next time
        if snapshot.decision.result == "allow" and action in snapshot.actions:
            account.refusals = 0
            self.commits += 1
            key = f"soak-{self.tag}-{self.name.rsplit('-', 1)[-1]}-c{self.commits}"
            self.planned = PlannedCommit(account, snapshot, action, value, key)
            return
        account.refusals += 1
        if account.refusals >= REFUSALS_BEFORE_REPLACING:
            self.accounts.remove(account)
            self.accounts.append(await self._account_new())

    async def _commit(self, planned: PlannedCommit) -> None:
        assert self.client is not None
        account = planned.account
        self.traffic.commit_sent(planned.key, account.subject)
        self.planned = None
        try:
            effect = await self.client.commit(
                planned.snapshot,
                action=planned.action,
                resulting_value=planned.value,
                idempotency_key=planned.key,
            )
        except (OwnerUnavailable, IdempotencyKeyInUse, Unavailable) as exc:
            # Nothing executed (or our own request is still in flight): the same key again.
            self._answered(planned.key, exc)
            if planned.retries < SAME_KEY_RETRIES:
                planned.retries += 1
                planned.not_before = time.monotonic() + (exc.retry_after or 1.0)
                self.planned = planned
            return
        except TransportError:
            # CommitOutcomeUnknown among them: only asking with that key can tell.
            account.wait_for(planned.key)
            return
        except ReconcileError as exc:
            self._answered(planned.key, exc)
            if exc.status is not None and exc.status >= 500:
                account.wait_for(planned.key)  # it may have been recorded: ask
            return
        self.traffic.commit_answered(
            planned.key,
            status=None,
            effect_status=effect.status,
            carried_effect=True,
        )
        if effect.status in FINAL:
            self._settled(account, effect.status, planned.value)
        else:
            account.wait_for(planned.key)
            account.believed = planned.value

    def _answered(self, key: str, exc: ReconcileError) -> None:
        effect = exc.body.get("effect")
        if isinstance(effect, Mapping):
            status, carried = str(effect.get("status", "")), True
        else:
            status, carried = exc.code, False
        self.traffic.commit_answered(
            key, status=exc.status, effect_status=status, carried_effect=carried
        )

    async def _poll(self, account: Account) -> None:
        assert self.client is not None and account.in_flight is not None
        account.polled_at = time.monotonic()
        account.polls += 1
        try:
            effect = await self.client.effect(account.in_flight)
        except ReconcileError as exc:
            if exc.status == 404:
                account.in_flight = None  # never recorded: nothing to wait for
            return
        if effect.status in FINAL:
            self._settled(account, effect.status, effect.resulting_value)

    @staticmethod
    def _settled(account: Account, status: str, value: Any) -> None:
        account.in_flight = None
        if status == "verified" and value in NEXT_ACTION:
            account.believed = value
