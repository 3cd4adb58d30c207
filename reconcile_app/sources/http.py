"""Adapter for a real owner system speaking the owner contract of docs/api.md over HTTP.

`GET {base_url}records/{subject}/{field}` → `{"value", "version", "valid_from",
"recorded_at", "observed_at"}` with `ETag: "<version>"`; `GET {base_url}authority/{fact_key}`
(and, for an owner that keeps authority history, `?as_of=`: believed only when it echoes it).
Authentication, when the owner needs it, is a bearer token read from the environment
variable the source file names in `auth_token_env` (secrets never live in contract files),
and only from one under RECONCILE_SOURCE_TOKEN_ENV_PREFIX (reconcile_app.sources.tokens).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any
from urllib.parse import quote, urlencode

import httpx

from reconcile_app.canonical import rfc3339
from reconcile_app.choices import ReadStatus
from reconcile_app.limits import identifier_problem
from reconcile_app.reducers import Event
from reconcile_app.sources import (
    ApplyOutcome,
    ApplyResult,
    AuthorityResult,
    EffectCommand,
    EventsAsked,
    EventsResult,
    LookupOutcome,
    LookupResult,
    ReadAsked,
    ReadResult,
    SourceAdapter,
)
from reconcile_app.sources.owner_answers import (
    authority_answer,
    integer_version,
    owner_json,
    owner_time,
    owner_version,
    receipt_problem,
    shown,
)
from reconcile_app.sources.owner_client import (
    owner_asks_at_once,
    owner_base,
    owner_client_problem,
    owner_request,
    owner_timeout,
    owner_url,
)
from reconcile_app.sources.tokens import source_token, token_env_problem


def _unsafe_identifier(value: object) -> bool:
    """True when `value` could steer the owner URL instead of naming one thing in it.

    quote() encodes "/" and "\\", but "." and ".." pass through as dot segments that httpx
    and the owner's server resolve (records/../effects); whitespace and control characters
    are no part of an identifier and could split a header. The API refuses these already
    (docs/api.md "Input limits"); this is the same rule again where the URL is built.
    """
    return not isinstance(value, str) or identifier_problem(value) is not None


def _event_seq(value: object) -> int:
    """An event's position in the owner's log, as strictly as a version (ValueError if not)."""
    seq = owner_version(value)
    if seq is None:
        raise ValueError(f"event seq {shown(value)} is not a position")
    return seq


def _detail(said: dict[str, Any], default: str) -> str:
    """The owner's `detail`, as text and kept short (it is stored and shown)."""
    detail = said.get("detail", default)
    text = detail if isinstance(detail, str) else shown(detail)
    return text if len(text) <= 500 else text[:497] + "..."


def _failed(exc: Exception) -> str:
    """A failed call's error as a detail, kept short: h11 quotes an owner's garbled status
    line or header in its message (up to httpcore's 100 KiB), and details are stored in
    snapshots and effects and shown to agents."""
    text = str(exc)
    return text if len(text) <= 300 else text[:297] + "..."


@dataclass(frozen=True)
class _Refusal:
    """Why a call must not reach the owner; nothing was sent."""

    code: str  # invalid_identifier | owner_unavailable
    detail: str


def _lookup_missing(response: httpx.Response) -> LookupResult:
    """A 404 is the ledger's "never saw this key" only when the owner says so by its code:
    a proxy's or a misrouted path's 404 would otherwise settle an effect `not_executed`
    while the owner's ledger holds it (as `authority_not_found` for the authority)."""
    try:
        body = owner_json(response)
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("code") == "effect_not_found":
        return LookupResult(outcome=LookupOutcome.NOT_FOUND)
    return LookupResult(
        outcome=LookupOutcome.UNAVAILABLE,
        detail="owner answered 404 without the code effect_not_found",
    )


class HttpAdapter(SourceAdapter):
    def _refusal(self, **identifiers: str) -> _Refusal | None:
        """Why no request may go to the owner at all, or None: checked before any I/O."""
        for name, value in identifiers.items():
            if _unsafe_identifier(value):
                return _Refusal("invalid_identifier", f"invalid identifier: {name} {shown(value)}")
        try:
            self._base  # noqa: B018 - parsed (and kept) here, before anything is sent
        except httpx.InvalidURL as exc:
            return _Refusal("owner_unavailable", f"{self.source.name}: {exc}; nothing was sent")
        if problem := owner_client_problem():
            return _Refusal("owner_unavailable", f"{self.source.name}: {problem}; nothing was sent")
        token_env = (self.source.options or {}).get("auth_token_env")
        if token_env and (problem := token_env_problem(token_env)):
            # A row loaded before the prefix existed (or changed): sending it without the
            # token would only fail at the owner, sending the variable could leak a secret.
            return _Refusal("owner_unavailable", f"{self.source.name}: {problem}; nothing was sent")
        return None

    def _call(
        self, method: str, path: str, *, headers: dict[str, str] | None = None, **kwargs: Any
    ) -> httpx.Response:
        """One request to the owner on the process's kept connections (owner_request), with
        this source's token, timeout and base URL: nothing of it is kept between calls."""
        options = self.source.options or {}
        sent = dict(headers or {})
        token_env = options.get("auth_token_env")
        token = source_token(token_env) if token_env else None
        if token:
            sent["Authorization"] = f"Bearer {token}"
        url = owner_url(self._base, path)
        timeout = owner_timeout(options.get("timeout_ms"))
        return owner_request(method, url, headers=sent, timeout=timeout, **kwargs)

    @cached_property
    def _base(self) -> httpx.URL:
        """The source's base URL, parsed once per adapter (raises httpx.InvalidURL for a row
        loaded before source files were checked for one; `_refusal` turns it away)."""
        return owner_base(self.source.base_url)

    @classmethod
    def read_batch(cls, reads: list[ReadAsked]) -> list[ReadResult]:
        if len(reads) < 2 or not all(type(adapter) is HttpAdapter for adapter, _, _ in reads):
            return super().read_batch(reads)
        return owner_asks_at_once(reads, [])[0]  # directly: never back through the base class

    @classmethod
    def answer_together(
        cls, reads: list[ReadAsked], events: list[EventsAsked]
    ) -> tuple[list[ReadResult], list[EventsResult]]:
        """All in flight at once (owner_asks_at_once), for this class's own adapters only: a
        subclass may touch the database, and a pool thread would keep its connection."""
        asked = [adapter for adapter, _, _ in (*reads, *events)]
        if len(asked) > 1 and all(type(adapter) is HttpAdapter for adapter in asked):
            return owner_asks_at_once(reads, events)
        return super().answer_together(reads, events)

    def read(self, subject: str, field: str) -> ReadResult:
        if refusal := self._refusal(subject=subject, field=field):
            return ReadResult.failed(ReadStatus.UNAVAILABLE, refusal.detail)
        path = f"records/{quote(subject, safe='')}/{quote(field, safe='')}"
        try:
            response = self._call("GET", path)
        except httpx.TimeoutException as exc:
            return ReadResult.failed(
                ReadStatus.TIMEOUT, f"{self.source.name} timed out: {_failed(exc)}"
            )
        except httpx.HTTPError as exc:
            return ReadResult.failed(ReadStatus.UNAVAILABLE, f"{self.source.name}: {_failed(exc)}")
        if response.status_code != 200:
            return ReadResult.failed(
                ReadStatus.UNAVAILABLE,
                f"{self.source.name} answered {response.status_code} for {subject}/{field}",
            )
        try:
            body = owner_json(response)
            version = owner_version(body["version"])
        except (ValueError, KeyError, TypeError):
            version = None
        if version is None:  # no record, or no version one could send back in If-Match
            return ReadResult.failed(
                ReadStatus.UNAVAILABLE, f"{self.source.name} sent a malformed record"
            )
        return ReadResult(
            status=ReadStatus.OK,
            value=body.get("value"),
            version=version,
            valid_from=owner_time(body.get("valid_from")),
            recorded_at=owner_time(body.get("recorded_at")),
            observed_at=owner_time(body.get("observed_at")),
        )

    def authority(self, fact_key: str, as_of: datetime | None = None) -> AuthorityResult:
        if refusal := self._refusal(fact_key=fact_key):
            return AuthorityResult(
                status=ReadStatus.UNAVAILABLE, detail=refusal.detail, as_of=as_of
            )
        path = f"authority/{quote(fact_key, safe='')}"
        if as_of is not None:
            path += "?" + urlencode({"as_of": rfc3339(as_of)})
        try:
            response = self._call("GET", path)
        except httpx.TimeoutException as exc:
            return AuthorityResult(status=ReadStatus.TIMEOUT, detail=_failed(exc), as_of=as_of)
        except httpx.HTTPError as exc:
            return AuthorityResult(status=ReadStatus.UNAVAILABLE, detail=_failed(exc), as_of=as_of)
        return authority_answer(
            self.source.name, fact_key, as_of, response, self.authority_history_missing
        )

    def apply(self, command: EffectCommand) -> ApplyResult:
        refusal = self._refusal(
            idempotency_key=command.idempotency_key, subject=command.subject, field=command.field
        )
        if refusal:
            return ApplyResult(
                outcome=ApplyOutcome.REJECTED, code=refusal.code, detail=refusal.detail
            )
        headers = {
            "Idempotency-Key": command.idempotency_key,
            "If-Match": f'"{command.expected_version}"',
        }
        body = {
            "subject": command.subject,
            "field": command.field,
            "action": command.action,
            "resulting_value": command.resulting_value,
        }
        try:
            response = self._call("POST", "effects", json=body, headers=headers)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
            # Nothing left this machine (no connection was made, or none was free to send
            # on): the owner certainly did not execute it.
            return ApplyResult(
                outcome=ApplyOutcome.REJECTED, code="owner_unavailable", detail=_failed(exc)
            )
        except httpx.HTTPError as exc:
            # Sent, then the answer was lost (read timeout, reset, broken pipe): it may have
            # happened. This is unknown, never rejected.
            return ApplyResult(outcome=ApplyOutcome.UNKNOWN, code="timeout", detail=_failed(exc))
        try:
            answer = owner_json(response)
        except ValueError:
            answer = None
        if 200 <= response.status_code < 300:
            mismatch = receipt_problem(
                answer,
                idempotency_key=command.idempotency_key,
                subject=command.subject,
                field=command.field,
                expected_version=command.expected_version,
            )
            if response.status_code not in (200, 201):
                # 202 "queued", 204 "done, nothing to say": a success without a receipt.
                mismatch = f"owner answered {response.status_code}, which is no receipt"
            if mismatch:
                # The owner answered, but not with proof of this command (a confused owner,
                # a cache or proxy answering for another request): it may or may not have
                # executed, so it is unknown, and the owner's ledger decides.
                return ApplyResult(
                    outcome=ApplyOutcome.UNKNOWN, code="receipt_mismatch", detail=mismatch
                )
            return ApplyResult(outcome=ApplyOutcome.ACCEPTED, receipt=answer)
        # A refusal's body is the owner's to shape: an object, or nothing of it is used.
        said = answer if isinstance(answer, dict) else {}
        if response.status_code == 412:
            expected = integer_version(said.get("expected", command.expected_version))
            return ApplyResult(
                outcome=ApplyOutcome.REJECTED,
                code="version_changed",
                expected=expected if expected is not None else command.expected_version,
                found=integer_version(said.get("found")),
                # Marked as the owner's words: they reach agents in problem+json beside ours.
                detail=f"owner answered 412: {_detail(said, 'precondition failed')}",
            )
        if response.status_code == 422:
            return ApplyResult(
                outcome=ApplyOutcome.REJECTED,
                code="idempotency_key_reused",
                detail=f"owner answered 422: {_detail(said, 'key reused')}",
            )
        if response.status_code in (409, 429) or (
            response.status_code == 503 and said.get("code") != "owner_unavailable"
        ):
            # A refusal that does not prove the command was left undone: 409 is "this key is
            # still in flight" (the idempotency-key draft; our own API says so too), 429 a
            # limiter's "not now", and a 503 that is not the owner's own owner_unavailable is a
            # proxy's, which it also answers when its upstream reset after executing. The
            # owner's ledger settles it.
            return ApplyResult(
                outcome=ApplyOutcome.UNKNOWN,
                code="refusal_unproven",
                detail=f"owner answered {response.status_code}: {_detail(said, '')}".rstrip(": "),
            )
        if response.status_code >= 500 and response.status_code != 503:
            # A crash or a gateway that gave up waiting: the owner may have executed it.
            return ApplyResult(
                outcome=ApplyOutcome.UNKNOWN,
                code="timeout",
                detail=f"owner answered {response.status_code}",
            )
        return ApplyResult(
            outcome=ApplyOutcome.REJECTED,
            code="owner_unavailable" if response.status_code == 503 else "owner_refused",
            detail=f"owner answered {response.status_code}: {_detail(said, '')}",
        )

    def lookup_effect(self, idempotency_key: str) -> LookupResult:
        if refusal := self._refusal(idempotency_key=idempotency_key):
            return LookupResult(outcome=LookupOutcome.UNAVAILABLE, detail=refusal.detail)
        try:
            response = self._call("GET", f"effects/{quote(idempotency_key, safe='')}")
        except httpx.HTTPError as exc:
            return LookupResult(outcome=LookupOutcome.UNAVAILABLE, detail=_failed(exc))
        if response.status_code == 404:
            return _lookup_missing(response)
        if response.status_code != 200:
            return LookupResult(
                outcome=LookupOutcome.UNAVAILABLE, detail=f"owner answered {response.status_code}"
            )
        try:
            receipt = owner_json(response)
        except ValueError:
            return LookupResult(outcome=LookupOutcome.UNAVAILABLE, detail="malformed receipt")
        if not isinstance(receipt, dict):
            return LookupResult(outcome=LookupOutcome.UNAVAILABLE, detail="malformed receipt")
        if receipt.get("idempotency_key") != idempotency_key:
            # Someone else's receipt proves nothing about ours: ask again later.
            return LookupResult(
                outcome=LookupOutcome.UNAVAILABLE,
                detail=f"receipt does not match: its idempotency_key is "
                f"{shown(receipt.get('idempotency_key'))}, asked {shown(idempotency_key)}",
            )
        return LookupResult(outcome=LookupOutcome.FOUND, receipt=receipt)

    def events(
        self, subject: str, after: int | None = None, recorded_before: datetime | None = None
    ) -> EventsResult:
        if refusal := self._refusal(subject=subject):
            return EventsResult(status=ReadStatus.UNAVAILABLE, detail=refusal.detail)
        query: dict[str, str] = {"subject": subject}
        if after is not None:
            query["after"] = str(after)
        if recorded_before is not None:
            query["recorded_before"] = recorded_before.isoformat()
        try:
            response = self._call("GET", f"events?{urlencode(query)}")
        except httpx.TimeoutException as exc:
            return EventsResult(status=ReadStatus.TIMEOUT, detail=_failed(exc))
        except httpx.HTTPError as exc:
            return EventsResult(status=ReadStatus.UNAVAILABLE, detail=_failed(exc))
        if response.status_code != 200:
            return EventsResult(
                status=ReadStatus.UNAVAILABLE, detail=f"owner answered {response.status_code}"
            )
        try:
            body = owner_json(response)
            items = body["events"] if isinstance(body, dict) else body
            events = [
                Event(
                    event_id=str(item["event_id"]),
                    seq=_event_seq(item["seq"]),
                    type=str(item["type"]),
                    subject=str(item["subject"]),
                    field=str(item.get("field") or ""),
                    value=item.get("value"),
                    valid_from=owner_time(item["valid_from"]),  # type: ignore[arg-type]
                    recorded_at=owner_time(item["recorded_at"]),  # type: ignore[arg-type]
                )
                for item in items
            ]
        except (ValueError, KeyError, TypeError):
            return EventsResult(status=ReadStatus.UNAVAILABLE, detail="malformed events")
        if any(event.valid_from is None or event.recorded_at is None for event in events):
            return EventsResult(status=ReadStatus.UNAVAILABLE, detail="events without times")
        observed = owner_time(body.get("observed_at")) if isinstance(body, dict) else None
        return EventsResult(status=ReadStatus.OK, events=events, observed_at=observed)
