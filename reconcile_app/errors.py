"""Domain errors. Each carries the stable `code` and HTTP status the API reports."""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    """A refusal the caller can act on: rendered as problem+json with `code`."""

    status = 400
    code = "bad_request"
    title = "Bad request"
    # Seconds after which the same request may succeed, sent as `Retry-After`; None where
    # retrying cannot help (the caller must change something first).
    retry_after: int | None = None

    def __init__(
        self,
        detail: str,
        *,
        code: str | None = None,
        status: int | None = None,
        title: str | None = None,
        retry_after: int | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        if code is not None:
            self.code = code
        if status is not None:
            self.status = status
        if title is not None:
            self.title = title
        if retry_after is not None:
            self.retry_after = retry_after
        self.extra = extra


class ValidationFailed(DomainError):
    status = 400
    code = "invalid_request"
    title = "Invalid request"


class NotFound(DomainError):
    status = 404
    code = "not_found"
    title = "Not found"


class Forbidden(DomainError):
    status = 403
    code = "forbidden"
    title = "Forbidden"


class Conflict(DomainError):
    status = 409
    code = "conflict"
    title = "Conflict"


class Locked(DomainError):
    status = 423
    code = "locked"
    title = "Locked"


class Unprocessable(DomainError):
    """Well-formed, but against a rule of the domain (an undeclared class, missing consent)."""

    status = 422
    title = "Unprocessable"


class ContractFileError(Exception):
    """A contract or source file that cannot be loaded, with where and why."""

    def __init__(self, path: str, line: int | None, reason: str) -> None:
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason
