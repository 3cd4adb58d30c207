"""Reading what an owner answered (the owner contract of docs/api.md): its timestamps, its
receipts, and its answer to `GET authority/{fact_key}`, now or `?as_of=`."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import httpx
from django.utils.dateparse import parse_datetime

from reconcile_app.canonical import rfc3339
from reconcile_app.choices import ReadStatus
from reconcile_app.instants import instant
from reconcile_app.limits import json_unstorable
from reconcile_app.sources import AuthorityResult

# The longest `owner` and `source_revision` an authority answer may give: what a fact record
# holds of each (reconcile_app.models.memory), and an escalation of its owner.
AUTHORITY_TEXT_MOST = 200

# How an owner without authority history answers the `as_of` form of `GET authority/{key}`.
HISTORY_REFUSED = (400, 404, 405, 501)


def owner_json(response: httpx.Response) -> Any:
    """The owner's answer as JSON. ValueError, as for no JSON at all, when it is nested too
    deeply or holds what no store keeps (NUL, a lone surrogate): a record whose value was
    `"a\\u0000b"` or 600 levels of lists was read `ok`, then writing or hashing the snapshot
    failed and the reconcile answered 500."""
    try:
        body = response.json()
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply") from exc
    if (problem := json_unstorable(body)) is not None:
        raise ValueError(problem)
    return body


def owner_time(raw: Any) -> datetime | None:
    """An owner's timestamp in UTC, or None if it is missing, malformed, has no timezone or
    has no instant in UTC (`9999-12-31T23:59:59-01:00`: a snapshot could not state it, and
    the reconcile answered 500).

    None is safe: a read with no trustworthy observed_at is judged stale (fails closed).
    """
    if not isinstance(raw, str):
        return None
    try:
        parsed = parse_datetime(raw)
        if parsed is None or parsed.tzinfo is None:
            return None
        return instant(parsed)
    except ValueError:
        return None


def shown(value: object) -> str:
    """An identifier or an owner's value in a detail: quoted, escaped and kept short."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# The largest version an effect can record (its versions are 64-bit integers).
VERSION_MOST = 2**63 - 1


def integer_version(value: object) -> int | None:
    """`value` when it is a JSON integer from 0 to VERSION_MOST (a version an effect can
    record), else None: `true` is no version, nor 42.9."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= VERSION_MOST:
        return value
    return None


def owner_version(value: object) -> int | None:
    """A record's version as an owner may send it: an `integer_version`, or its decimal
    digits as a string (an ETag's text); None for anything else. `int()` took 42.9 for 42
    and `true` for 1: a record read at a version the owner never had."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 19:
        value = int(value)
    return integer_version(value)


def receipt_problem(
    receipt: Any, *, idempotency_key: str, subject: str, field: str, expected_version: int
) -> str | None:
    """Why `receipt` is not proof that the command with this key, target and If-Match
    executed, or None when it is.

    It must name the command's idempotency key, subject and field, and the version the write
    produced: an integer past the one the command was sent against (a compare-and-set write
    moves the version on; readbacks judge the target against it). Anything else is an
    answer, not proof: a confused owner, or a cache or proxy answering for another request.
    """
    if not isinstance(receipt, dict):
        return f"the receipt is not an object ({type(receipt).__name__})"
    asked = {"idempotency_key": idempotency_key, "subject": subject, "field": field}
    for key, value in asked.items():
        if key not in receipt:
            return f"the receipt has no {key} (asked {shown(value)})"
        if receipt[key] != value:
            return f"the receipt's {key} is {shown(receipt[key])}, asked {shown(value)}"
    version = integer_version(receipt.get("resulting_version"))
    if version is None or version <= expected_version:
        return (
            f"the receipt's resulting_version is {shown(receipt.get('resulting_version'))}: "
            "not a version past "
            f"{expected_version}, the one the command was sent against"
        )
    return None


def authority_answer(
    source: str,
    fact_key: str,
    as_of: datetime | None,
    response: httpx.Response,
    history_missing: Callable[[str, datetime], AuthorityResult],
) -> AuthorityResult:
    """The owner's answer to `GET authority/{fact_key}` (`?as_of=` when `as_of` is given).

    A 404 `authority_not_found` is an answer, "none is registered": unlike an owner that is
    down, asking again will not change it, so the fact's 503 carries no Retry-After.
    """
    try:
        body = owner_json(response)
    except ValueError:
        body = None
    if as_of is not None and (
        history := _history_problem(source, fact_key, as_of, response, body, history_missing)
    ):
        return history
    if response.status_code == 404 and _code(body) == "authority_not_found":
        return AuthorityResult.unregistered(
            f"{source} registers no authority for {fact_key}", as_of=as_of
        )
    if response.status_code != 200:
        return AuthorityResult(
            status=ReadStatus.UNAVAILABLE,
            detail=f"{source} answered {response.status_code} for {fact_key}",
            as_of=as_of,
        )
    if not isinstance(body, dict):
        return AuthorityResult(
            status=ReadStatus.UNAVAILABLE, detail="malformed answer", as_of=as_of
        )
    owner, revision = body.get("owner"), body.get("source_revision")
    for name, said in (("owner", owner), ("source_revision", revision)):
        if isinstance(said, str) and len(said) > AUTHORITY_TEXT_MOST:
            # No fact record could name it, and an escalation opened for its key could not
            # be written to it: /facts/{key}/current answered 500 for an owner-less record.
            return AuthorityResult(
                status=ReadStatus.UNAVAILABLE,
                detail=f"{source} answered an {name} of {len(said)} characters for {fact_key}: "
                f"at most {AUTHORITY_TEXT_MOST}",
                as_of=as_of,
            )
    return AuthorityResult(
        status=ReadStatus.OK,
        owner=owner if isinstance(owner, str) else "",
        source_revision=revision if isinstance(revision, str) else "",
        as_of=as_of,
    )


def _code(body: Any) -> Any:
    return body.get("code") if isinstance(body, dict) else None


def _history_problem(
    source: str,
    fact_key: str,
    as_of: datetime,
    response: httpx.Response,
    body: Any,
    history_missing: Callable[[str, datetime], AuthorityResult],
) -> AuthorityResult | None:
    """Why an answer to an `as_of` question is not the owner's history, or None.

    An owner without history either refuses the form (400, 404, 405, 501) or ignores the
    query string and answers with today's authority: only an answer that echoes the time
    asked is history. A 404 that echoes it means "none was registered then".
    """
    echoed = owner_time(body.get("as_of")) if isinstance(body, dict) else None
    if echoed is None:
        if response.status_code in (200, *HISTORY_REFUSED):
            return history_missing(fact_key, as_of)
        return None
    if echoed != as_of:
        return AuthorityResult(
            status=ReadStatus.UNAVAILABLE,
            detail=f"{source} answered for {shown(body.get('as_of'))}, asked {rfc3339(as_of)}",
            as_of=as_of,
        )
    if response.status_code == 404:
        return AuthorityResult.unregistered(
            f"{source} registered no authority for {fact_key} by {rfc3339(as_of)}", as_of=as_of
        )
    return None
