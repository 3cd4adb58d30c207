"""The sans-IO core: requests as data, answers as data, problems as exceptions.

Nothing here performs I/O. A `Flow` (see `_flows.py`) yields `Send` and `Sleep` steps and is
sent back what came of them; the sync and the async client are two small drivers of the same
flows, so request building, answer parsing, error mapping, retries and polling cannot drift
apart between them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import Any, Final, TypeVar
from urllib.parse import quote

from reconcile_client.errors import ReconcileError, TransportError, ValidationError, error_class

API = "/api/v1"
# The longest Retry-After honoured: the server's longest throttle window. A longer one (or
# `inf`) is a broken answer, and a sleep that long raises OverflowError mid-commit.
MOST_RETRY_AFTER_SECONDS = 86400.0
VERSION = "0.1.0"
USER_AGENT = f"reconcile-client/{VERSION}"


class Unset:
    """The type of UNSET: an argument left out, which is not the same as null."""

    _instance: Unset | None = None

    def __new__(cls) -> Unset:
        # One instance, so `is UNSET` holds across copies and pickling.
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False


UNSET: Final = Unset()


@dataclass(frozen=True)
class HttpRequest:
    method: str
    path: str
    params: Mapping[str, str] = field(default_factory=dict)
    body: Any = UNSET  # JSON-able; UNSET sends no body
    headers: Mapping[str, str] = field(default_factory=dict)
    # The body as sent: encoded once, here, where what cannot be encoded is refused.
    content: bytes = field(init=False, default=b"", repr=False, compare=False)

    def __post_init__(self) -> None:
        # What UTF-8 or JSON cannot carry (a lone surrogate, as a broken decoder or
        # os.fsdecode leaves in text; a NaN) made httpx raise UnicodeEncodeError or ValueError
        # while building the request: not a ReconcileError, and a commit stopped by it was
        # noted as perhaps sent. Refused here, inside the flow, as the server refuses it.
        for name, value in self.params.items():
            if not _utf8(str(value)):
                raise ValidationError(
                    status=400,
                    code="invalid_parameter",
                    detail=f"{name} holds a lone surrogate, which UTF-8 cannot carry "
                    "(refused before sending)",
                )
        if self.body is UNSET:
            return
        try:
            content = json.dumps(
                self.body, ensure_ascii=False, separators=(",", ":"), allow_nan=False
            ).encode("utf-8")
        except (UnicodeEncodeError, ValueError) as exc:
            raise ValidationError(
                status=400,
                code="malformed_json",
                detail="the body holds what JSON text cannot carry: a lone surrogate "
                "(\\ud800-\\udfff), NaN or an infinity (refused before sending)",
            ) from exc
        object.__setattr__(self, "content", content)


@dataclass(frozen=True)
class Answer:
    """An HTTP answer: status, headers (lower-cased names) and the JSON body, if any."""

    status: int
    headers: Mapping[str, str]
    body: Any
    text: str = ""

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


@dataclass(frozen=True)
class NoAnswer:
    """The request got no answer: a timeout, a refused or broken connection. `sent` is False
    when none of it can have reached the server (no connection was had: the pool's wait or
    the connect timed out, the connection was refused), True when it may have."""

    reason: str
    timed_out: bool
    sent: bool = True


@dataclass(frozen=True)
class Send:
    request: HttpRequest


@dataclass(frozen=True)
class Sleep:
    seconds: float


Step = Send | Sleep
Reply = Answer | NoAnswer | None
T = TypeVar("T")
Flow = Generator[Step, Reply, T]


def path(*parts: str) -> str:
    """An API path with each dynamic part escaped (keys are identifiers, but never trust)."""
    return "/".join([API, *(segment(part) for part in parts)])


def segment(part: str) -> str:
    """One path segment, percent-encoded. `.` and `..` are encoded too: left as they are, the
    URL is normalised before sending (`effects/.` is the list of effects, `facts/../current`
    is another route) and the server never sees the identifier it would refuse."""
    if not _utf8(part):
        raise ValidationError(
            status=400,
            code="invalid_identifier",
            detail=f"{part!r} holds a lone surrogate, which UTF-8 cannot carry "
            "(refused before sending)",
        )
    quoted = quote(part, safe="")
    return quoted.replace(".", "%2E") if quoted in (".", "..") else quoted


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def header_safe(value: str) -> bool:
    """Whether an HTTP header can carry `value` as it is: printable ASCII, no surrounding
    whitespace. httpx refuses anything else before sending, and its error quotes the value."""
    return value.isascii() and value.isprintable() and value == value.strip()


def jsonable(value: Any) -> Any:
    """Datetimes as RFC 3339 UTC with a `Z`, dates as ISO, dataclass-like claims as dicts."""
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        text = moment.astimezone(timezone.utc).isoformat()
        return text.replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(key): jsonable(item) for key, item in value.items() if item is not UNSET}
    if isinstance(value, list | tuple):
        return [jsonable(item) for item in value]
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return jsonable(to_json())
    return value


def compact(**fields: Any) -> dict[str, Any]:
    """A request body without the fields left UNSET (absent is not null to this API)."""
    return {name: jsonable(value) for name, value in fields.items() if value is not UNSET}


def decode(status: int, headers: Mapping[str, str], content: bytes) -> Answer:
    """Bytes off the wire → an Answer; a body that is not JSON is kept as text."""
    lowered = {name.lower(): value for name, value in headers.items()}
    text = content.decode("utf-8", errors="replace")
    body: Any = None
    if content:
        try:
            body = json.loads(text)
        except (ValueError, RecursionError):  # nested past the parser's depth: no JSON
            body = None
    return Answer(status=status, headers=lowered, body=body, text=text)


def retry_after(answer: Answer) -> float | None:
    """Retry-After in seconds (the API sends delta-seconds; an HTTP date is not honoured)."""
    raw = answer.header("Retry-After")
    if raw is None:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        return None
    if not math.isfinite(seconds):
        return None
    return min(max(0.0, seconds), MOST_RETRY_AFTER_SECONDS)


def problem(answer: Answer) -> ReconcileError:
    """The exception for a non-2xx answer: problem+json's `code`, or `http_<status>`."""
    body = answer.body if isinstance(answer.body, Mapping) else {}
    code = str(body.get("code") or f"http_{answer.status}")
    cls = error_class(answer.status, code)
    return cls(
        status=answer.status,
        code=code,
        detail=str(body.get("detail") or (answer.text[:500] if not body else "")),
        title=str(body.get("title") or ""),
        body=body,
        retry_after=retry_after(answer),
    )


def json_of(answer: Answer) -> Mapping[str, Any]:
    """The JSON object of a 2xx answer; raises the problem of any other."""
    if not 200 <= answer.status < 300:
        raise problem(answer)
    if not isinstance(answer.body, Mapping):
        raise ReconcileError(
            status=answer.status,
            code="unexpected_body",
            detail=f"expected a JSON object, got {answer.text[:200]!r}",
        )
    return answer.body


def answered(reply: Reply) -> Answer:
    """The Answer a Send step got back, or the TransportError of getting none."""
    if isinstance(reply, Answer):
        return reply
    if isinstance(reply, NoAnswer):
        code = "timeout" if reply.timed_out else "connection_failed"
        raise TransportError(status=None, code=code, detail=reply.reason)
    raise RuntimeError("a Send step must be answered with an Answer or a NoAnswer")


def exchange(request: HttpRequest) -> Flow[Mapping[str, Any]]:
    """One request, one JSON object back (the plain case: no retry, no polling)."""
    reply = yield Send(request)
    return json_of(answered(reply))
