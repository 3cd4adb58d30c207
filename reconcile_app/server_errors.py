"""Server faults answered the way people and clients read them, never Django's bare
"Server Error (500)" page.

Django calls `handler500` for an exception nothing else answered: a console view, a middleware
(sessions, authentication), a template. The API's own view exceptions are answered earlier by
api/middleware.py, in the same terms; this covers what escapes it.

A database or shared cache out of reach is a 503 with Retry-After, as the API answers it: during
an incident the console is what operations have open, and "try again in a moment" is the truth,
where a 500 says the product is broken. The pages are rendered without the request's context:
the context processors and the navigation read the database, which may be what failed.
"""

from __future__ import annotations

import logging
import sys

from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.views import defaults

from reconcile_app.api.middleware import (
    OUTAGE_RETRY_AFTER_SECONDS,
    answers_problem_json,
    outage_of,
    problem_for,
)
from reconcile_app.api.problems import problem_json_response
from reconcile_app.console.messages import console_message, hx_trigger
from reconcile_app.request_id import request_id_of

logger = logging.getLogger(__name__)
# One such message on a page at a time, gone once a request succeeds (messages.js).
MESSAGE_KEY = "server-fault"


def server_error(request: HttpRequest) -> HttpResponse:
    exception = sys.exc_info()[1]
    if not isinstance(exception, Exception):  # called without one (a test, a custom view)
        exception = RuntimeError("server error")
    if answers_problem_json(request.path):
        return problem_for(exception)
    outage = outage_of(exception)
    request_id = request_id_of(request)
    if outage is None:
        status, template = 500, "500.html"
        context: dict[str, object] = {"request_id": request_id}
        text = "The server could not complete this; it has been logged."
    else:
        status, template = 503, "503.html"
        context = {
            "request_id": request_id,
            "code": outage.code,
            "dependency": outage.dependency,
            "retry_after": OUTAGE_RETRY_AFTER_SECONDS,
        }
        text = (
            f"Reconcile cannot reach {outage.dependency} ({outage.code}); "
            f"try again in {OUTAGE_RETRY_AFTER_SECONDS} seconds."
        )
    body, content_type = _page(template, context, text)
    response = HttpResponse(body, status=status, content_type=content_type)
    response["Cache-Control"] = "no-store"
    if status == 503:
        response["Retry-After"] = str(OUTAGE_RETRY_AFTER_SECONDS)
    if request.headers.get("HX-Request"):
        # htmx swaps no error response: without a message in the page, an action or a
        # refresh that failed would look as if nothing had happened.
        message = console_message(
            "error", text, key=MESSAGE_KEY, until_success=True, ref=request_id
        )
        response["HX-Trigger"] = hx_trigger(message=message)
    return response


def _page(template: str, context: dict[str, object], text: str) -> tuple[str, str]:
    try:
        return render_to_string(template, context), "text/html; charset=utf-8"
    except Exception:  # a page that cannot be drawn (a static file missing from the manifest)
        # Raised from here, Django would call this handler again for every middleware the
        # fault passes on its way out, and the server's own page would answer in the end.
        logger.exception("the %s page could not be rendered", template)
        return f"{text}\n", "text/plain; charset=utf-8"


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """A request Django refused before any view (a Host outside ALLOWED_HOSTS, more than
    DATA_UPLOAD_MAX_NUMBER_FIELDS query parameters): problem+json where clients read it, as
    every other API answer; Django's page for the console."""
    if answers_problem_json(request.path):
        return problem_json_response(
            status_code=400,
            code="invalid_request",
            title="Invalid request",
            # The exception's own words may echo what was sent (a Host); its kind does not.
            detail="the request was refused before it reached the API "
            f"({type(exception).__name__})",
        )
    return defaults.bad_request(request, exception)
