"""RFC 9457 problem details for every API error, each with a stable `code`."""

from __future__ import annotations

import re
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, JsonResponse
from rest_framework import exceptions
from rest_framework.response import Response

from reconcile_app.errors import DomainError

PROBLEM_TYPE = "https://reconcile.invalid/problems/"
CONTENT_TYPE = "application/problem+json"

_DRF_CODES = {
    exceptions.NotAuthenticated: "not_authenticated",
    exceptions.AuthenticationFailed: "authentication_failed",
    exceptions.PermissionDenied: "forbidden",
    exceptions.NotFound: "not_found",
    exceptions.MethodNotAllowed: "method_not_allowed",
    exceptions.NotAcceptable: "not_acceptable",
    exceptions.UnsupportedMediaType: "unsupported_media_type",
    exceptions.Throttled: "throttled",
    exceptions.ParseError: "malformed_json",
    exceptions.ValidationError: "invalid_request",
}


def problem_body(
    *, status_code: int, code: str, title: str, detail: str, **extra: Any
) -> dict[str, Any]:
    return {
        "type": PROBLEM_TYPE + code,
        "title": title,
        "status": status_code,
        "detail": detail,
        "code": code,
        **extra,
    }


def problem_response(**kwargs: Any) -> Response:
    body = problem_body(**kwargs)
    return Response(body, status=body["status"], content_type=CONTENT_TYPE)


def problem_json_response(**kwargs: Any) -> JsonResponse:
    body = problem_body(**kwargs)
    return JsonResponse(body, status=body["status"], content_type=CONTENT_TYPE)


def _detail_text(detail: Any) -> str:
    if isinstance(detail, list):
        return "; ".join(_detail_text(item) for item in detail)
    if isinstance(detail, dict):
        return "; ".join(f"{key}: {_detail_text(value)}" for key, value in detail.items())
    return str(detail)


# DRF's default details for a method or a media type are templates ('Method "{method}" not
# allowed.'): a title names the kind of problem, so the placeholder and its quotes go.
_TEMPLATE_PLACEHOLDER = re.compile(r'\s*"\{\w+\}"')


def _title(exc: exceptions.APIException) -> str:
    if exc.status_code == 400:
        return "Invalid request"
    return _TEMPLATE_PLACEHOLDER.sub("", str(exc.default_detail)).rstrip(".")


def _raised_code(exc: exceptions.APIException) -> str:
    """The code an APIException was raised with (`default_code`, or `code=`), else "error"."""
    codes = exc.get_codes()
    return codes if isinstance(codes, str) else "error"


def problem_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DomainError):
        response = problem_response(
            status_code=exc.status, code=exc.code, title=exc.title, detail=exc.detail, **exc.extra
        )
        if exc.retry_after is not None:
            response["Retry-After"] = str(exc.retry_after)
        if exc.status == 401:
            # Access taken back while the request ran (principals.access_held): the same
            # challenge as a key refused at authentication (RFC 9110, 11.6.1).
            response["WWW-Authenticate"] = "Bearer"
        return response
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    if not isinstance(exc, exceptions.APIException):
        return None
    code = next((c for cls, c in _DRF_CODES.items() if isinstance(exc, cls)), None)
    if code is None:
        # An exception of another app (lineage_app raises DRF exceptions, never ours) keeps
        # the stable code it was raised with.
        code = _raised_code(exc)
    extra: dict[str, Any] = {}
    if isinstance(exc, exceptions.ValidationError):
        extra["errors"] = exc.detail
    if getattr(exc, "problem_code", None):
        code = exc.problem_code  # type: ignore[attr-defined]
    response = problem_response(
        status_code=exc.status_code,
        code=code,
        title=_title(exc),
        detail=_detail_text(exc.detail),
        **extra,
    )
    if isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
        response["WWW-Authenticate"] = "Bearer"
    if getattr(exc, "wait", None):
        response["Retry-After"] = str(int(exc.wait))  # type: ignore[attr-defined]
    return response
