"""The protocol, once: each client method is one of these flows (sans-IO, see `_wire.py`).

The rules the clients enforce live here, so both drivers enforce them identically:
- a commit carries the If-Match of the snapshot's read of the action's field and one
  Idempotency-Key; a lost answer is retried with that key only, a bounded number of times;
- a 202 `unknown` is an answer: it is returned, never sent again;
- `wait` polls the effect by its key until a final status (or its timeout), honouring
  Retry-After.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime
from typing import Any

from reconcile_client._wire import (
    UNSET,
    Answer,
    Flow,
    HttpRequest,
    NoAnswer,
    Send,
    Sleep,
    compact,
    exchange,
    header_safe,
    json_of,
    path,
    problem,
    retry_after,
)
from reconcile_client.errors import (
    CommitOutcomeUnknown,
    ReconcileError,
    TransportError,
    ValidationError,
)
from reconcile_client.models import (
    Effect,
    Escalation,
    Evidence,
    Fact,
    Me,
    Memory,
    Replay,
    Snapshot,
)

# How long to wait before the n-th retry of a commit whose answer was lost (seconds).
COMMIT_BACKOFF = (0.2, 0.5, 1.0, 2.0, 4.0)
# Answers to a poll that say "not now" rather than anything about the effect.
NOT_YET = (429, 503)


def reconcile(
    *,
    subject: str,
    purpose: str,
    decision_class: str,
    proposed_action: str,
    claims: Sequence[Mapping[str, Any] | Any] | None,
    proposed_value: Any,
    contract_version: str | None,
) -> Flow[Snapshot]:
    body = compact(
        subject=subject,
        purpose=purpose,
        decision_class=decision_class,
        proposed_action=proposed_action,
        claims=list(claims) if claims is not None else UNSET,
        proposed_value=proposed_value,
        contract_version=contract_version if contract_version is not None else UNSET,
    )
    data = yield from exchange(HttpRequest("POST", path("reconcile"), body=body))
    return Snapshot.from_json(data)


def snapshot(snapshot_id: str) -> Flow[Snapshot]:
    data = yield from exchange(HttpRequest("GET", path("snapshots", snapshot_id)))
    return Snapshot.from_json(data)


def replay(snapshot_id: str, mode: str) -> Flow[Replay]:
    request = HttpRequest("POST", path("snapshots", snapshot_id, "replay"), body={"mode": mode})
    data = yield from exchange(request)
    return Replay.from_json(data)


def _if_match_from(snap: Snapshot, action: str) -> str:
    """The If-Match for `action`: the snapshot's ready value, `actions[action].if_match`
    (the version it read of the field the action writes). A snapshot without a handle for
    the action does not authorise it, and only `actions` names an action's field, so any
    version it read will do: the server answers the real refusal (decision_not_allowed,
    escalation_pending...) before it compares versions."""
    handle = snap.actions.get(action)
    if handle is not None:
        return handle.if_match
    versions = [read.version for read in snap.fields.values() if read.version is not None]
    return f'"{versions[0]}"' if versions else '"0"'


def commit(
    target: Snapshot | str,
    *,
    action: str,
    resulting_value: Any,
    idempotency_key: str | None,
    if_match: str | None,
    attempts: int,
    resumed: bool = False,
) -> Flow[Effect]:
    """`resumed`: this client sent the same commit under this key before (`_keys.py`), and
    that request may still be in flight at the server, as a lost attempt's may."""
    # An empty key is a key (refused below, as the server would), never a reason for a new one.
    key = f"rc-{uuid.uuid4()}" if idempotency_key is None else idempotency_key
    try:
        return (
            yield from _commit_under(
                key,
                target,
                action,
                resulting_value,
                if_match=if_match,
                attempts=attempts,
                resumed=resumed,
            )
        )
    except ReconcileError as refused:
        # Whatever refused it, the agent needs the key: to retry (owner_unavailable), to ask
        # about (an unknown outcome), or to know nothing went under it yet.
        refused.idempotency_key = key
        raise


def _commit_under(
    key: str,
    target: Snapshot | str,
    action: str,
    resulting_value: Any,
    *,
    if_match: str | None,
    attempts: int,
    resumed: bool,
) -> Flow[Effect]:
    if not key or not header_safe(key):
        # An HTTP header cannot carry it (the server's rule too, docs/api.md "Input limits"):
        # refused here as the server would, not as an encoding error from the transport, nor
        # as a lost answer (httpx refuses a control character before sending anything, and a
        # "lost" commit would be reported as an outcome unknown under a key nobody can ask).
        raise ValidationError(
            status=400,
            code="invalid_identifier",
            detail=f"Idempotency-Key {key!r} must be printable ASCII without whitespace or "
            "control characters (refused before sending)",
        )
    if if_match is not None and not header_safe(if_match):
        raise ValidationError(
            status=400,
            code="invalid_if_match",
            detail=f'If-Match must be a quoted version, e.g. "42", not {if_match!r} '
            "(refused before sending)",
        )
    if if_match is None:
        snap = target if isinstance(target, Snapshot) else None
        if snap is None or (action not in snap.actions and snap.decision.result == "escalate"):
            # A snapshot id alone, or an escalation perhaps approved since the snapshot was
            # issued: read it again (an approval adds the action to `actions`).
            snap = yield from snapshot(target if isinstance(target, str) else target.snapshot_id)
        if_match = _if_match_from(snap, action)
    snapshot_id = target if isinstance(target, str) else target.snapshot_id
    request = HttpRequest(
        "POST",
        path("effects"),
        body=compact(snapshot_id=snapshot_id, action=action, resulting_value=resulting_value),
        headers={"Idempotency-Key": key, "If-Match": if_match},
    )
    lost = busy = unsent = 0
    while True:
        reply = yield Send(request)
        if isinstance(reply, NoAnswer) and not reply.sent:
            # No connection was had (the client's pool was full, the server refused or did
            # not accept one): nothing reached the server, so this says nothing of an
            # outcome. Sent again with the same key all the same, within the same bound.
            unsent += 1
            if lost + unsent >= attempts:
                if lost or resumed:  # an earlier attempt may have reached it
                    raise CommitOutcomeUnknown(
                        idempotency_key=key, attempts=lost + unsent, detail=reply.reason
                    )
                raise TransportError(
                    status=None,
                    code="timeout" if reply.timed_out else "connection_failed",
                    detail=f"{reply.reason} ({unsent} attempts): no connection was had, "
                    "nothing was sent; commit again with the same key",
                )
            yield Sleep(_backoff(lost + unsent))
            continue
        if isinstance(reply, NoAnswer) or (
            isinstance(reply, Answer) and _commit_answer_lost(reply)
        ):
            # The command may have reached the owner: only the same key may go again.
            lost += 1
            reason = reply.reason if isinstance(reply, NoAnswer) else f"HTTP {reply.status}"
            if lost + unsent >= attempts:
                raise CommitOutcomeUnknown(
                    idempotency_key=key, attempts=lost + unsent, detail=reason
                )
            yield Sleep(_backoff(lost + unsent))
            continue
        assert isinstance(reply, Answer)
        if (lost or resumed) and _not_yet(reply):
            if busy >= attempts:
                # Our own lost attempt is still being worked on, or nothing would tell us: its
                # outcome is not known yet, and only this key may ever ask about it.
                raise CommitOutcomeUnknown(
                    idempotency_key=key,
                    attempts=max(lost, 1),  # a resumed commit: its earlier request
                    detail=f"the first attempt's outcome was still unknown after {busy} more "
                    f"asks (last answer: HTTP {reply.status})",
                )
            # Our own lost attempt is still being processed, or this answer says nothing of
            # it: ask again, same key, when the server says.
            busy += 1
            yield Sleep(retry_after(reply) or _backoff(busy))
            continue
        if reply.status in (200, 201, 202):
            replayed = (reply.header("Idempotent-Replayed") or "").lower() == "true"
            data = json_of(reply)
            try:
                return Effect.from_json(data, replayed=replayed)
            except (KeyError, TypeError, ValueError, AttributeError) as unread:
                # The server recorded the effect (2xx) but its answer is no effect: what
                # became of it is unknown here, and only this key may ask.
                raise CommitOutcomeUnknown(
                    idempotency_key=key,
                    attempts=max(lost, 1),  # a resumed commit: its earlier request
                    detail=f"HTTP {reply.status} with a body that is no effect "
                    f"({type(unread).__name__}: {unread})",
                ) from unread
        raise problem(reply)


def _backoff(attempt: int) -> float:
    return COMMIT_BACKOFF[min(attempt, len(COMMIT_BACKOFF)) - 1]


def _gateway_lost(answer: Answer) -> bool:
    """A proxy's 502 or 504 (no problem+json of ours): the proxy lost the server's answer, or
    gave up waiting for it. The request may have reached the server: as good as no answer."""
    coded = isinstance(answer.body, Mapping) and "code" in answer.body
    return answer.status in (502, 504) and not coded


def _commit_answer_lost(answer: Answer) -> bool:
    """What a commit counts as no answer: a proxy's lost one, or a 500 (the server failed
    part-way, perhaps after the owner took the command). Either may hide an effect, so only
    the same key may go again (the server answers from its record if there is one). A poll
    (`wait`) is a read: a 500 there hides nothing and is raised."""
    return answer.status == 500 or _gateway_lost(answer)


def _not_yet(answer: Answer) -> bool:
    """An answer, after a lost attempt, that says nothing of that attempt (which may have been
    executed): the key still in flight, throttled, or Reconcile itself briefly unavailable. A
    503 `owner_unavailable` does say: the owner never took the command."""
    code = answer.body.get("code") if isinstance(answer.body, Mapping) else None
    unavailable = answer.status == 503 and code != "owner_unavailable"
    return _in_flight(answer) or answer.status == 429 or unavailable


def _in_flight(answer: Answer) -> bool:
    return (
        answer.status == 409
        and isinstance(answer.body, Mapping)
        and answer.body.get("code") == "idempotency_key_in_use"
    )


def effect(idempotency_key: str) -> Flow[Effect]:
    data = yield from exchange(HttpRequest("GET", path("effects", idempotency_key)))
    return Effect.from_json(data)


def wait(
    target: Effect | str,
    *,
    timeout: float,
    interval: float,
    clock: Callable[[], float],
) -> Flow[Effect]:
    """Poll until verified | postcondition_failed | rejected | not_executed, or `timeout`
    seconds: then the effect as last seen (`unknown` stays unknown: people resolve it)."""
    key = target if isinstance(target, str) else target.idempotency_key
    last = target if isinstance(target, Effect) else None
    # Always ask at least once, even about an effect already final: the answer carries the
    # timeline (what the readback found), which a commit's answer does not.
    deadline = clock() + timeout
    delay = interval
    while True:
        reply = yield Send(HttpRequest("GET", path("effects", key)))
        pause = delay
        if isinstance(reply, Answer) and (reply.status in NOT_YET or _gateway_lost(reply)):
            # Throttled, briefly unavailable, or a proxy's 502/504 (the answer lost on its
            # way, as a commit counts it): not an answer about the effect. Ask again when the
            # server says (within the deadline), as a lost GET is asked again.
            pause = retry_after(reply) or delay
        elif isinstance(reply, Answer):
            last = Effect.from_json(json_of(reply), replayed=bool(last and last.replayed))
            if last.final:
                return last
            pause = retry_after(reply) or delay
        # A lost GET is harmless to repeat: keep polling until the deadline.
        remaining = deadline - clock()
        if remaining <= 0:
            if last is None:
                raise TransportError(
                    status=None, code="timeout", detail=f"no answer about {key} in {timeout}s"
                )
            return last
        yield Sleep(min(pause, remaining))
        delay = min(delay * 1.5, 5.0)


def current_fact(fact_key: str, *, on: date | None, as_of: datetime | None) -> Flow[Fact]:
    params = compact(
        on=on if on is not None else UNSET, as_of=as_of if as_of is not None else UNSET
    )
    request = HttpRequest("GET", path("facts", fact_key, "current"), params=params)
    data = yield from exchange(request)
    return Fact.from_json(data)


def remember(**fields: Any) -> Flow[Memory]:
    data = yield from exchange(HttpRequest("POST", path("memories"), body=compact(**fields)))
    return Memory.from_json(data)


def memories(**filters: Any) -> Flow[list[Memory]]:
    params = {name: str(value) for name, value in compact(**filters).items() if value}
    request = HttpRequest("GET", path("memories"), params={**params, "page_size": "500"})
    data = yield from exchange(request)
    return [Memory.from_json(item) for item in data.get("results", ())]


def attest(**fields: Any) -> Flow[Evidence]:
    data = yield from exchange(HttpRequest("POST", path("evidence"), body=compact(**fields)))
    return Evidence.from_json(data)


def escalation(escalation_id: str) -> Flow[Escalation]:
    data = yield from exchange(HttpRequest("GET", path("escalations", escalation_id)))
    return Escalation.from_json(data)


def me() -> Flow[Me]:
    data = yield from exchange(HttpRequest("GET", path("me")))
    return Me.from_json(data)
