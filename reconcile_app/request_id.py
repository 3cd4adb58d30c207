"""A request id on every request and response, so audit rows can be tied to access logs."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

HEADER = "HTTP_X_REQUEST_ID"
_SAFE = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class RequestIdMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        incoming = request.META.get(HEADER, "")
        # Accept a caller's id only if it is harmless to log; otherwise mint one.
        request_id = incoming if _SAFE.match(incoming) else uuid.uuid4().hex
        request.request_id = request_id  # type: ignore[attr-defined]
        response = self.get_response(request)
        response["X-Request-ID"] = request_id
        return response


def request_id_of(request: HttpRequest) -> str:
    return getattr(request, "request_id", "")
