"""Keep /api/ answers JSON even when Django itself answers (404 routes, crashes), and refuse
bodies over the size limit before anything reads them."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import NamedTuple

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, InternalError, OperationalError
from django.http import HttpRequest, HttpResponse
from redis.exceptions import AuthenticationError, OutOfMemoryError, ReadOnlyError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from config.file_cache import CacheUnavailable
from reconcile_app.api.problems import problem_json_response

logger = logging.getLogger(__name__)
# A locked SQLite database, a failed-over PostgreSQL or a restarted Redis is usually back
# within seconds.
OUTAGE_RETRY_AFTER_SECONDS = 5


# Paths whose clients read problem+json (the schema's operations): the API and the scrape.
def answers_problem_json(path: str) -> bool:
    return path.startswith("/api/") or path == "/metrics"


class Outage(NamedTuple):
    """A dependency out of reach: the 503's code and detail, and the dependency in words (the
    console's page names it)."""

    code: str
    dependency: str
    detail: str


# PostgreSQL's read_only_sql_transaction: a write sent to a standby, or to a primary set
# read-only, as after a failover until the connections move to the new primary.
READ_ONLY_TRANSACTION = "25006"


def _refused_as_read_only(exception: Exception) -> bool:
    cause = exception.__cause__
    return isinstance(exception, InternalError) and (
        getattr(cause, "sqlstate", None) == READ_ONLY_TRANSACTION
    )


def outage_of(exception: Exception) -> Outage | None:
    """The dependency out of reach, or None for a fault to see and fix (a 500): a
    programming error, a wrong password, a failing script."""
    # Only a database that cannot be reached, is locked or takes no writes (a standby
    # after a failover; /readyz says so too) is "unavailable".
    if isinstance(exception, OperationalError | InterfaceError) or _refused_as_read_only(exception):
        return Outage(
            "database_unavailable",
            "its database",
            "the database could not complete the request; nothing was written",
        )
    # The shared cache (Redis with services) holds the rate limits and key-failure lockouts
    # that authentication and the throttle consult before any handler runs: unreachable,
    # loading, read-only after a failover or timing out, requests are refused rather than
    # let through unthrottled and unlocked.
    # A Redis full under `noeviction` (OutOfMemoryError: "command not allowed when used
    # memory > 'maxmemory'") takes no writes either. The embedded default's file cache counts
    # alike: its disk full or read-only, no counter can be written (config/file_cache.py).
    refused = RedisConnectionError | RedisTimeoutError | ReadOnlyError | OutOfMemoryError
    if isinstance(exception, refused | CacheUnavailable) and not isinstance(
        exception, AuthenticationError
    ):
        return Outage(
            "cache_unavailable",
            "its shared cache",
            "the shared cache (rate limits, lockouts) could not be reached or took no "
            "writes; nothing was written",
        )
    return None


class BodyLimitMiddleware:
    """413 for a body over RECONCILE_MAX_BODY_BYTES, decided from Content-Length alone, and
    411 for a body sent without one.

    Nothing is read or parsed first: a 6 MiB body used to reach the JSON parser and the
    serializers, and ended in a 500. Django's own DATA_UPLOAD_MAX_MEMORY_SIZE (set to the
    same limit) covers bodies that understate their length.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if _chunked_without_length(request):
            return _length_required(request)
        limit: int = settings.RECONCILE_MAX_BODY_BYTES
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > limit:
            detail = f"the request body is {length} bytes; the limit is {limit}"
            if request.path.startswith("/api/"):
                return problem_json_response(
                    status_code=413,
                    code="payload_too_large",
                    title="Payload too large",
                    detail=detail,
                    limit=limit,
                )
            return HttpResponse(detail, status=413, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


def _chunked_without_length(request: HttpRequest) -> bool:
    encoding = request.META.get("HTTP_TRANSFER_ENCODING", "").lower()
    return "chunked" in encoding and not request.META.get("CONTENT_LENGTH")


def _length_required(request: HttpRequest) -> HttpResponse:
    """411 for a chunked body. Django reads a WSGI body by its Content-Length alone, so a
    chunked one (a client streaming it) arrived as empty and was answered 400 "this field is
    required", about a body that did carry the field."""
    detail = "send the body with a Content-Length: a chunked request body is not read"
    if request.path.startswith("/api/"):
        return problem_json_response(
            status_code=411, code="length_required", title="Length required", detail=detail
        )
    return HttpResponse(detail, status=411, content_type="text/plain; charset=utf-8")


def _holds_nul(request: HttpRequest) -> bool:
    return "\x00" in request.path or any(
        "\x00" in name or any("\x00" in value for value in values)
        for name, values in request.GET.lists()
    )


class ApiProblemMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if _holds_nul(request):
            # No identifier or value may hold NUL, and PostgreSQL cannot even compare one: a
            # NUL in a path or a query parameter reached the database as a 500 (found by the
            # fuzzer on the API; the console's pages, /contracts/{class}/%00/ among them,
            # answered 500 until they were refused here too). Refused once, for every page,
            # as bodies are by the parser.
            detail = "the path or query string holds a NUL character (%00)"
            if not request.path.startswith("/api/"):
                return HttpResponse(detail, status=400, content_type="text/plain; charset=utf-8")
            return problem_json_response(
                status_code=400, code="invalid_request", title="Invalid request", detail=detail
            )
        response = self.get_response(request)
        if (
            request.path.startswith("/api/")
            and response.status_code == 404
            and not response.get("Content-Type", "").startswith(
                ("application/json", "application/problem+json")
            )
        ):
            return problem_json_response(
                status_code=404,
                code="not_found",
                title="Not found",
                detail=f"no API resource at {request.path}",
            )
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not answers_problem_json(request.path):
            return None
        if isinstance(exception, RequestDataTooBig):
            return problem_json_response(
                status_code=413,
                code="payload_too_large",
                title="Payload too large",
                detail=str(exception),
                limit=settings.RECONCILE_MAX_BODY_BYTES,
            )
        outage = outage_of(exception)
        what = outage.code if outage is not None else "unhandled error"
        logger.exception("%s on %s", what, request.path)
        return problem_for(exception)


def problem_for(exception: Exception) -> HttpResponse:
    """The problem+json answer to an exception no handler answered: a 503 for a dependency
    out of reach, otherwise a 500 (already logged by whoever caught it)."""
    outage = outage_of(exception)
    if outage is not None:
        response = problem_json_response(
            status_code=503, code=outage.code, title="Service unavailable", detail=outage.detail
        )
        # Nothing was written, so the same request may simply be sent again.
        response["Retry-After"] = str(OUTAGE_RETRY_AFTER_SECONDS)
        return response
    return problem_json_response(
        status_code=500,
        code="internal_error",
        title="Internal error",
        detail="an unexpected error occurred; it has been logged",
    )
