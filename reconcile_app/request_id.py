"""A request id on every request and response, so audit rows can be tied to access logs."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from config.logs import principal_var, request_id_var
from reconcile_app.services.key_use import key_in_use

HEADER = "HTTP_X_REQUEST_ID"
_SAFE = re.compile(r"[A-Za-z0-9._-]{1,64}")


class RequestIdMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        incoming = request.META.get(HEADER, "")
        # Accept a caller's id only if it is harmless to log; otherwise mint one.
        request_id = incoming if _SAFE.fullmatch(incoming) else uuid.uuid4().hex
        request.request_id = request_id  # type: ignore[attr-defined]
        # Log lines of this request carry its id (config/logs.py). Set, not reset: Django
        # logs a 4xx/5xx after the middleware has returned, and the next request on this
        # thread sets its own before anything logs.
        request_id_var.set(request_id)
        principal_var.set("")
        key_in_use.set(None)
        response = self.get_response(request)
        response["X-Request-ID"] = request_id
        return response


class LogPrincipalMiddleware:
    """After authentication: a signed-in person's username on this request's log lines.
    (An agent's API key is authenticated later, by DRF, which names it there.)"""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            principal_var.set(user.get_username())
        return self.get_response(request)


def request_id_of(request: HttpRequest) -> str:
    return getattr(request, "request_id", "")
