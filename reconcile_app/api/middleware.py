"""Keep /api/ answers JSON even when Django itself answers (404 routes, crashes), and refuse
bodies over the size limit before anything reads them."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from redis.exceptions import AuthenticationError, ReadOnlyError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from reconcile_app.api.problems import problem_json_response

logger = logging.getLogger(__name__)
# A locked SQLite database or a failed-over PostgreSQL is usually back within seconds, as is
# a restarted Redis.
DATABASE_RETRY_AFTER_SECONDS = CACHE_RETRY_AFTER_SECONDS = 5


class BodyLimitMiddleware:
    """413 for a body over RECONCILE_MAX_BODY_BYTES, decided from Content-Length alone.

    Nothing is read or parsed first: a 6 MiB body used to reach the JSON parser and the
    serializers, and ended in a 500. Django's own DATA_UPLOAD_MAX_MEMORY_SIZE (set to the
    same limit) covers bodies that understate their length.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
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


def _holds_nul(request: HttpRequest) -> bool:
    return "\x00" in request.path or any(
        "\x00" in name or any("\x00" in value for value in values)
        for name, values in request.GET.lists()
    )


class ApiProblemMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith("/api/") and _holds_nul(request):
            # No identifier or value may hold NUL, and PostgreSQL cannot even compare one: a
            # NUL in a path or a query parameter reached the database as a 500 (found by the
            # fuzzer). Refused here once, for every endpoint, as bodies are by the parser.
            return problem_json_response(
                status_code=400,
                code="invalid_request",
                title="Invalid request",
                detail="the path or query string holds a NUL character (%00)",
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
        if not request.path.startswith("/api/"):
            return None
        if isinstance(exception, RequestDataTooBig):
            return problem_json_response(
                status_code=413,
                code="payload_too_large",
                title="Payload too large",
                detail=str(exception),
                limit=settings.RECONCILE_MAX_BODY_BYTES,
            )
        # Only a database that cannot be reached or is locked is "unavailable"; programming
        # errors stay 500s so they are seen and fixed.
        if isinstance(exception, OperationalError | InterfaceError):
            logger.exception("database error on %s", request.path)
            response = problem_json_response(
                status_code=503,
                code="database_unavailable",
                title="Service unavailable",
                detail="the database could not complete the request; nothing was written",
            )
            # Nothing was written, so the same request may simply be sent again.
            response["Retry-After"] = str(DATABASE_RETRY_AFTER_SECONDS)
            return response
        # The shared cache (Redis with services) holds the rate limits and the key-failure
        # lockouts, which authentication and the throttle consult before any handler runs.
        # Unreachable, it is an outage like the database's, not a fault in the request; and
        # requests are refused rather than let through unthrottled and unlocked.
        # Only a Redis that cannot be reached, is still loading, has gone read-only (a failover)
        # or times out: a wrong password or a failing script is a fault to see and fix.
        if isinstance(
            exception, RedisConnectionError | RedisTimeoutError | ReadOnlyError
        ) and not isinstance(exception, AuthenticationError):
            logger.exception("cache error on %s", request.path)
            response = problem_json_response(
                status_code=503,
                code="cache_unavailable",
                title="Service unavailable",
                detail="the shared cache (rate limits, lockouts) could not be reached; "
                "nothing was written",
            )
            response["Retry-After"] = str(CACHE_RETRY_AFTER_SECONDS)
            return response
        logger.exception("unhandled error on %s", request.path)
        return problem_json_response(
            status_code=500,
            code="internal_error",
            title="Internal error",
            detail="an unexpected error occurred; it has been logged",
        )
