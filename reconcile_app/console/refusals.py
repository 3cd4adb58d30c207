"""Post/redirect/get for console forms that are refused.

Most console forms post to an action URL (`/escalations/<id>/approve/`) and, when refused
(a missing reason, a decision already taken), answer with their page re-rendered: the error
beside the form, the draft kept. Without htmx that page sits at the action URL, and reloading
it posts the form again. So a plain (non-htmx) browser POST that is refused with a page is
kept, once, and the browser is sent (303) back to the page it came from, which shows the kept
page in place of its own. The address bar holds the page's own URL; a reload reads it afresh.
Successful posts already redirect; htmx posts never change the address bar.

The page waits in the cache for a minute at most, under a random key that only the session
names: it holds the subject, the values on the page and the draft the person typed (which a
refusal keeps nowhere else), and in the session it was a database row, in the WAL and the
backups, until the browser came back for it, or for the session's whole life when it never did.
Without the cache the refusal is answered in place, as it is without a Referer.

Only refusals of a form that came from a console page are moved (that page itself, when the
form posts to its own URL): the Referer says which page (same host only); without one
nothing changes.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from redis.exceptions import RedisError

SESSION_KEY = "console_refused_page"
CACHE_PREFIX = "reconcile:refused-page:"
# Long enough for a browser to follow the 303 on a slow link; short enough that a page
# nobody came back for is gone within the minute.
KEPT_SECONDS = 60
# Redis out of reach (or, for the file cache, its directory): the refusal is answered in place.
CACHE_FAULTS = (RedisError, OSError)
# What a refused form answers with: a page the browser should show, not a server fault.
REFUSED_STATUSES = frozenset({400, 403, 404, 409, 412, 422, 423})
# The API and the login page answer for themselves.
SKIPPED_PREFIXES = ("/api/", "/accounts/", "/metrics", "/static/", "/admin/")


def page_it_came_from(request: HttpRequest) -> str | None:
    """The console page (path and query) the Referer names, on this host; else None."""
    referer = request.headers.get("Referer", "")
    if not referer:
        return None
    parts = urlsplit(referer)
    if parts.netloc and parts.netloc != request.get_host():
        return None
    # A form that posts to its own page (the bulk preview, the no-JS quarantine form) is
    # moved too: its refusal would otherwise sit at the POST URL, and a reload re-post it.
    # `//other.host/…` (or `/\\other.host`) would be a redirect off this host: browsers read
    # such a Location as a scheme-relative URL.
    if not parts.path.startswith("/") or parts.path.startswith(("//", "/\\")):
        return None
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _is_refused_page(request: HttpRequest, response: HttpResponse) -> bool:
    return (
        request.method == "POST"
        and not request.headers.get("HX-Request")
        and not request.path.startswith(SKIPPED_PREFIXES)
        and response.status_code in REFUSED_STATUSES
        and response.get("Content-Type", "").startswith("text/html")
        and not getattr(response, "streaming", False)
        and hasattr(request, "session")
    )


class RefusedFormRedirectMiddleware:
    """See the module docstring. Sits after the session, authentication and CSP middleware."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # Only console pages are ever kept: the API and static files never touch the session.
        if (
            request.method == "GET"
            and not request.path.startswith(SKIPPED_PREFIXES)
            and hasattr(request, "session")
        ):
            waiting = request.session.get(SESSION_KEY)
            if waiting and waiting.get("path") == request.get_full_path():
                del request.session[SESSION_KEY]
                kept = _kept_take(str(waiting.get("key", "")))
                if kept is not None:
                    return self._replay(request, kept)
        response = self.get_response(request)
        if not _is_refused_page(request, response):
            return response
        page = page_it_came_from(request)
        if page is None:
            return response
        if hasattr(response, "render") and not response.is_rendered:  # type: ignore[attr-defined]
            response.render()  # type: ignore[attr-defined]
        key = secrets.token_urlsafe(16)
        kept = {
            "path": page,
            "status": response.status_code,
            "content": response.content.decode(response.charset or "utf-8"),
            "nonce": getattr(request, "csp_nonce", ""),
        }
        try:
            cache.set(f"{CACHE_PREFIX}{key}", kept, KEPT_SECONDS)
        except CACHE_FAULTS:
            return response
        # The session names the page and where it waits, nothing of what it shows.
        request.session[SESSION_KEY] = {"path": page, "key": key}
        redirect = HttpResponseRedirect(page)
        redirect.status_code = 303  # "see other": the browser GETs the page, never re-posts
        return redirect

    @staticmethod
    def _replay(request: HttpRequest, kept: dict[str, object]) -> HttpResponse:
        content = str(kept["content"])
        old_nonce, new_nonce = str(kept.get("nonce") or ""), getattr(request, "csp_nonce", "")
        if old_nonce and new_nonce:
            # The kept page's few inline scripts carry the old request's nonce; this response's
            # policy names a new one.
            content = content.replace(f'nonce="{old_nonce}"', f'nonce="{new_nonce}"')
        response = HttpResponse(content, status=int(str(kept["status"])))
        response["Cache-Control"] = "no-store"
        # Says, to tests and to people reading the network panel, where this page came from.
        response["X-Console-Refused-Form"] = "kept"
        return response


def _kept_take(key: str) -> dict[str, Any] | None:
    """The page kept under `key`, removed as it is read; None once its minute has passed, or
    with the cache out of reach (the page is then read afresh, without the error)."""
    if not key:
        return None
    try:
        kept: dict[str, Any] | None = cache.get(f"{CACHE_PREFIX}{key}")
        cache.delete(f"{CACHE_PREFIX}{key}")
    except CACHE_FAULTS:
        return None
    return kept
