"""`ReconcileClient`: the synchronous driver of the protocol's flows (`_flows.py`)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from types import TracebackType
from typing import Any, TypeVar

import httpx

from reconcile_client import _flows
from reconcile_client._keys import CommitKeys
from reconcile_client._wire import (
    UNSET,
    USER_AGENT,
    Answer,
    Flow,
    HttpRequest,
    NoAnswer,
    Reply,
    Sleep,
    decode,
    header_safe,
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

# A reconcile waits for its slowest owner (sources may take up to 24 s each), and the server's
# own worker timeout is 30 s: a client that gave up sooner would drop answers the server
# still gives, and a reconcile given up is a decision to ask for again.
DEFAULT_TIMEOUT = 30.0
DEFAULT_COMMIT_ATTEMPTS = 4


def client_headers(api_key: str) -> dict[str, str]:
    """The headers of every request. The key is taken without surrounding whitespace (a key
    read from a file or a secret often ends in a newline); a key no header can carry is
    refused here, without repeating it, rather than by httpx at each request, whose error
    quotes the whole Authorization header into every exception and log line."""
    key = api_key.strip()
    if not key or not header_safe(key):
        raise ValueError("api_key is empty or holds characters an HTTP header cannot carry")
    return {
        "Authorization": f"Bearer {key}",
        "Accept": "application/json, application/problem+json",
        "User-Agent": USER_AGENT,
    }


# What httpx raises before any byte of the request can have left: no connection was had
# (the client's own pool had none free in time, or the server's refused or did not accept
# one in time). An established connection that breaks is another matter: the request may
# have been read.
NEVER_SENT = (httpx.PoolTimeout, httpx.ConnectTimeout, httpx.ConnectError)


def no_answer(exc: httpx.RequestError) -> NoAnswer:
    """What httpx raised, as no answer (sync and async alike). An answer whose body cannot be
    decoded (a Content-Encoding that lies: httpx.DecodingError) is as good as none: a
    commit's command may have been executed, so only its key may go again."""
    if isinstance(exc, httpx.LocalProtocolError):
        # httpx refused to put our own request on the wire; its message quotes the header it
        # refused, which may be Authorization: the key must not reach errors, logs or a model.
        return NoAnswer(
            reason="LocalProtocolError: a header value HTTP cannot carry",
            timed_out=False,
            sent=False,
        )
    return NoAnswer(
        reason=f"{type(exc).__name__}: {exc}",
        timed_out=isinstance(exc, httpx.TimeoutException),
        sent=not isinstance(exc, NEVER_SENT),
    )


def to_httpx(request: HttpRequest) -> dict[str, Any]:
    """The keyword arguments httpx takes for one of our requests (sync and async alike)."""
    arguments: dict[str, Any] = {"params": dict(request.params), "headers": dict(request.headers)}
    if request.body is not UNSET:
        # Encoded once, when the request was made (as httpx's `json=` would encode it).
        arguments["content"] = request.content
        arguments["headers"]["Content-Type"] = "application/json"
    return arguments


class ReconcileClient:
    """A typed client for Reconcile's agent API.

    >>> rc = ReconcileClient("http://127.0.0.1:8000", api_key)
    >>> snap = rc.reconcile(subject="P17", purpose="fulfilment",
    ...                     decision_class="warehouse-pick", proposed_action="pick_pallet")
    >>> if snap.authorises("pick_pallet"):
    ...     effect = rc.wait(rc.commit(snap, action="pick_pallet", resulting_value="picked"))

    Every problem answer raises a `ReconcileError` subclass (`reconcile_client.errors`).
    `commit_attempts` bounds how often a commit whose answer was lost is sent again (always
    with its one Idempotency-Key). Pass `http_client` to supply your own `httpx.Client`
    (proxies, TLS, a mock transport); its base URL and headers are then yours to set.
    One client may be shared by threads (and `AsyncReconcileClient` by the tasks of one event
    loop): it keeps no per-call state, and the keys of commit intents it remembers are kept
    under a lock.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        commit_attempts: int = DEFAULT_COMMIT_ATTEMPTS,
        http_client: httpx.Client | None = None,
    ) -> None:
        self._http = http_client or httpx.Client(
            base_url=base_url.rstrip("/"), headers=client_headers(api_key), timeout=timeout
        )
        self._owns_http = http_client is None
        self.commit_attempts = commit_attempts
        self._commit_keys = CommitKeys()

    def __enter__(self) -> ReconcileClient:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def _send(self, request: HttpRequest) -> Answer | NoAnswer:
        try:
            response = self._http.request(request.method, request.path, **to_httpx(request))
        except httpx.RequestError as exc:  # no answer, or one that cannot be decoded
            return no_answer(exc)
        return decode(response.status_code, response.headers, response.content)

    def _run(self, flow: Flow[T]) -> T:
        reply: Reply = None
        try:
            while True:
                step = flow.send(reply)
                if isinstance(step, Sleep):
                    time.sleep(step.seconds)
                    reply = None
                else:
                    reply = self._send(step.request)
        except StopIteration as done:
            result: T = done.value
            return result

    def reconcile(
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
        return self._run(
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

    def snapshot(self, snapshot_id: str) -> Snapshot:
        return self._run(_flows.snapshot(snapshot_id))

    def replay(self, snapshot_id: str, *, mode: ReplayMode = "as_recorded") -> Replay:
        """Decide the snapshot again (POST /api/v1/snapshots/{id}/replay): `as_recorded`, as
        it was knowable then (exact unless something is wrong), or `corrected`, under the
        corrections made since. Never asks an owner for a current value."""
        return self._run(_flows.replay(snapshot_id, mode))

    def commit(
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
            return self._run(
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

    def effect(self, idempotency_key: str) -> Effect:
        """The effect with its timeline (GET /api/v1/effects/{key})."""
        return self._run(_flows.effect(idempotency_key))

    def wait(self, effect: Effect | str, *, timeout: float = 30.0, interval: float = 0.5) -> Effect:
        """Poll until verified, postcondition_failed, rejected or not_executed; after
        `timeout` seconds, the effect as it stands (possibly still `unknown`)."""
        return self._run(
            _flows.wait(effect, timeout=timeout, interval=interval, clock=time.monotonic)
        )

    def current_fact(
        self, fact_key: str, *, on: date | None = None, as_of: datetime | None = None
    ) -> Fact:
        """The record the owner's rule selects for `fact_key` on a date (or as of a time)."""
        return self._run(_flows.current_fact(fact_key, on=on, as_of=as_of))

    def remember(
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
        return self._run(
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

    def memories(
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
        return self._run(
            _flows.memories(
                subject=subject,
                field=field,
                fact_key=fact_key,
                memory_class=memory_class,
                status=status,
            )
        )

    def attest(
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
        return self._run(
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

    def escalation(self, escalation_id: str) -> Escalation:
        return self._run(_flows.escalation(escalation_id))

    def me(self) -> Me:
        """Who this key is, its capabilities and the decision classes it may reconcile."""
        return self._run(_flows.me())
