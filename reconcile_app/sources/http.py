"""Adapter for a real owner system speaking the owner contract of API.md over HTTP.

`GET {base_url}records/{subject}/{field}` → `{"value", "version", "valid_from",
"recorded_at", "observed_at"}` with `ETag: "<version>"`. Authentication, when the owner
needs it, is a bearer token read from the environment variable the source file names in
`auth_token_env` (secrets never live in contract files), and only from a variable under
RECONCILE_SOURCE_TOKEN_ENV_PREFIX (reconcile_app.sources.tokens).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import quote, urlencode

import httpx
from django.conf import settings
from django.utils.dateparse import parse_datetime

from reconcile_app.choices import ReadStatus
from reconcile_app.reducers import Event
from reconcile_app.sources import (
    ApplyOutcome,
    ApplyResult,
    AuthorityResult,
    EffectCommand,
    EventsResult,
    LookupOutcome,
    LookupResult,
    ReadResult,
    SourceAdapter,
)
from reconcile_app.sources.tokens import source_token, token_env_problem


def _time(raw: Any) -> datetime | None:
    """An owner's timestamp, or None if it is missing, malformed or has no timezone.

    None is safe: a read with no trustworthy observed_at is judged stale (fails closed).
    """
    if not isinstance(raw, str):
        return None
    try:
        parsed = parse_datetime(raw)
    except ValueError:
        return None
    if parsed is None or parsed.tzinfo is None:
        return None
    return parsed


class HttpAdapter(SourceAdapter):
    def _refusal(self) -> str | None:
        """Why no request may go to the owner at all, or None: checked before any I/O."""
        token_env = (self.source.options or {}).get("auth_token_env")
        if token_env and (problem := token_env_problem(token_env)):
            # A row loaded before the prefix existed (or changed): sending it without the
            # token would only fail at the owner, sending the variable could leak a secret.
            return f"{self.source.name}: {problem}; nothing was sent"
        return None

    def _client(self) -> httpx.Client:
        options = self.source.options or {}
        headers = {"Accept": "application/json"}
        token_env = options.get("auth_token_env")
        token = source_token(token_env) if token_env else None
        if token:
            headers["Authorization"] = f"Bearer {token}"
        timeout_ms = options.get("timeout_ms")
        timeout = (
            float(timeout_ms) / 1000.0 if timeout_ms else settings.RECONCILE_HTTP_TIMEOUT_SECONDS
        )
        base = (
            self.source.base_url
            if self.source.base_url.endswith("/")
            else self.source.base_url + "/"
        )
        return httpx.Client(base_url=base, headers=headers, timeout=timeout)

    def read(self, subject: str, field: str) -> ReadResult:
        if refusal := self._refusal():
            return ReadResult.failed(ReadStatus.UNAVAILABLE, refusal)
        path = f"records/{quote(subject, safe='')}/{quote(field, safe='')}"
        try:
            with self._client() as client:
                response = client.get(path)
        except httpx.TimeoutException as exc:
            return ReadResult.failed(ReadStatus.TIMEOUT, f"{self.source.name} timed out: {exc}")
        except httpx.HTTPError as exc:
            return ReadResult.failed(ReadStatus.UNAVAILABLE, f"{self.source.name}: {exc}")
        if response.status_code != 200:
            return ReadResult.failed(
                ReadStatus.UNAVAILABLE,
                f"{self.source.name} answered {response.status_code} for {subject}/{field}",
            )
        try:
            body = response.json()
            version = int(body["version"])
        except (ValueError, KeyError, TypeError):
            return ReadResult.failed(
                ReadStatus.UNAVAILABLE, f"{self.source.name} sent a malformed record"
            )
        return ReadResult(
            status=ReadStatus.OK,
            value=body.get("value"),
            version=version,
            valid_from=_time(body.get("valid_from")),
            recorded_at=_time(body.get("recorded_at")),
            observed_at=_time(body.get("observed_at")),
        )

    def authority(self, fact_key: str) -> AuthorityResult:
        if refusal := self._refusal():
            return AuthorityResult(status=ReadStatus.UNAVAILABLE, detail=refusal)
        try:
            with self._client() as client:
                response = client.get(f"authority/{quote(fact_key, safe='')}")
        except httpx.TimeoutException as exc:
            return AuthorityResult(status=ReadStatus.TIMEOUT, detail=str(exc))
        except httpx.HTTPError as exc:
            return AuthorityResult(status=ReadStatus.UNAVAILABLE, detail=str(exc))
        if response.status_code != 200:
            return AuthorityResult(
                status=ReadStatus.UNAVAILABLE,
                detail=f"{self.source.name} answered {response.status_code} for {fact_key}",
            )
        try:
            body = response.json()
        except ValueError:
            return AuthorityResult(status=ReadStatus.UNAVAILABLE, detail="malformed answer")
        owner, revision = body.get("owner"), body.get("source_revision")
        return AuthorityResult(
            status=ReadStatus.OK,
            owner=owner if isinstance(owner, str) else "",
            source_revision=revision if isinstance(revision, str) else "",
        )

    def apply(self, command: EffectCommand) -> ApplyResult:
        if refusal := self._refusal():
            return ApplyResult(
                outcome=ApplyOutcome.REJECTED, code="owner_unavailable", detail=refusal
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
            with self._client() as client:
                response = client.post("effects", json=body, headers=headers)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            # Nothing left this machine: the owner certainly did not execute it.
            return ApplyResult(
                outcome=ApplyOutcome.REJECTED, code="owner_unavailable", detail=str(exc)
            )
        except httpx.HTTPError as exc:
            # Sent, then the answer was lost (read timeout, reset, broken pipe): it may have
            # happened. This is unknown, never rejected.
            return ApplyResult(outcome=ApplyOutcome.UNKNOWN, code="timeout", detail=str(exc))
        try:
            answer = response.json()
        except ValueError:
            answer = {}
        if response.status_code in (200, 201) and isinstance(answer, dict):
            return ApplyResult(outcome=ApplyOutcome.ACCEPTED, receipt=answer)
        if response.status_code == 412:
            return ApplyResult(
                outcome=ApplyOutcome.REJECTED,
                code="version_changed",
                expected=answer.get("expected", command.expected_version),
                found=answer.get("found"),
                detail=str(answer.get("detail", "precondition failed")),
            )
        if response.status_code == 422:
            return ApplyResult(
                outcome=ApplyOutcome.REJECTED,
                code="idempotency_key_reused",
                detail=str(answer.get("detail", "key reused")),
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
            detail=f"owner answered {response.status_code}: {answer.get('detail', '')}",
        )

    def lookup_effect(self, idempotency_key: str) -> LookupResult:
        if refusal := self._refusal():
            return LookupResult(outcome=LookupOutcome.UNAVAILABLE, detail=refusal)
        try:
            with self._client() as client:
                response = client.get(f"effects/{quote(idempotency_key, safe='')}")
        except httpx.HTTPError as exc:
            return LookupResult(outcome=LookupOutcome.UNAVAILABLE, detail=str(exc))
        if response.status_code == 404:
            return LookupResult(outcome=LookupOutcome.NOT_FOUND)
        if response.status_code != 200:
            return LookupResult(
                outcome=LookupOutcome.UNAVAILABLE, detail=f"owner answered {response.status_code}"
            )
        try:
            return LookupResult(outcome=LookupOutcome.FOUND, receipt=response.json())
        except ValueError:
            return LookupResult(outcome=LookupOutcome.UNAVAILABLE, detail="malformed receipt")

    def events(
        self, subject: str, after: int | None = None, recorded_before: datetime | None = None
    ) -> EventsResult:
        if refusal := self._refusal():
            return EventsResult(status=ReadStatus.UNAVAILABLE, detail=refusal)
        query: dict[str, str] = {"subject": subject}
        if after is not None:
            query["after"] = str(after)
        if recorded_before is not None:
            query["recorded_before"] = recorded_before.isoformat()
        try:
            with self._client() as client:
                response = client.get(f"events?{urlencode(query)}")
        except httpx.TimeoutException as exc:
            return EventsResult(status=ReadStatus.TIMEOUT, detail=str(exc))
        except httpx.HTTPError as exc:
            return EventsResult(status=ReadStatus.UNAVAILABLE, detail=str(exc))
        if response.status_code != 200:
            return EventsResult(
                status=ReadStatus.UNAVAILABLE, detail=f"owner answered {response.status_code}"
            )
        try:
            body = response.json()
            items = body["events"] if isinstance(body, dict) else body
            events = [
                Event(
                    event_id=str(item["event_id"]),
                    seq=int(item["seq"]),
                    type=str(item["type"]),
                    subject=str(item["subject"]),
                    field=str(item.get("field") or ""),
                    value=item.get("value"),
                    valid_from=_time(item["valid_from"]),  # type: ignore[arg-type]
                    recorded_at=_time(item["recorded_at"]),  # type: ignore[arg-type]
                )
                for item in items
            ]
        except (ValueError, KeyError, TypeError):
            return EventsResult(status=ReadStatus.UNAVAILABLE, detail="malformed events")
        if any(event.valid_from is None or event.recorded_at is None for event in events):
            return EventsResult(status=ReadStatus.UNAVAILABLE, detail="events without times")
        observed = _time(body.get("observed_at")) if isinstance(body, dict) else None
        return EventsResult(status=ReadStatus.OK, events=events, observed_at=observed)
