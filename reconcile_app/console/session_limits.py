"""Console sessions end after a spell without a request, and at a fixed time after sign-in.

Django alone ends a session `SESSION_COOKIE_AGE` after it was last saved, and a console
session is rarely saved after sign-in: an unattended browser stayed signed in to an
operator's powers (quarantine, resolve, approve) for two weeks. Here each signed-in request
notes when it was seen (a save at most once a minute, or a tenth of the idle limit when
that is shorter: not a write on every page), and a request after
`RECONCILE_SESSION_IDLE_SECONDS` without one, or past `SESSION_COOKIE_AGE` since sign-in,
signs the person out: the page asks them to sign in again and says why.

A live page's own refreshes (a queue's checks, a pending effect's polling) are no activity:
they say `X-Reconcile-Background: 1` (static/reconcile/live.js and console.js) and leave the
last-seen time as it was, so a console left open on a live queue is signed out like any
other, and its next refresh sends the page to sign-in. Anyone can send the header; it only
makes a request count for less.

An htmx request, or a live page's refresh, that finds nobody signed in (the session ended,
or the account was disabled) is answered with a client redirect to the sign-in page, coming
back to the page it came from, rather than the sign-in form swapped into a table region.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import SESSION_KEY, logout
from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.utils.cache import add_never_cache_headers, patch_vary_headers
from django_htmx.http import HttpResponseClientRedirect

logger = logging.getLogger(__name__)

SIGNED_IN_AT = "reconcile_signed_in_at"
SEEN_AT = "reconcile_seen_at"
# How stale the last-seen time may grow before a request saves it again: a minute, and never
# more than a tenth of the idle limit. The limit counts from the saved time, so a person is
# signed out at most that much early; at a minute's limit, a saved time a minute old signed
# out someone busy every fifty seconds.
SEEN_RESOLUTION_SECONDS = 60
# Paths whose anonymous htmx requests are not the console's to redirect.
NOT_CONSOLE = ("/api/", "/accounts/", "/static/")
# What a request the page made by itself, not the person, says.
BACKGROUND_HEADER = "X-Reconcile-Background"


@receiver(user_logged_in)
def _session_started(sender: Any, request: HttpRequest | None, **kwargs: Any) -> None:
    if request is not None and hasattr(request, "session"):
        now = int(time.time())
        request.session[SIGNED_IN_AT] = now
        request.session[SEEN_AT] = now


def session_ended_because(session: Any, now: int) -> str:
    """Why a signed-in session may serve no more requests, or "" while it may."""
    signed_in = session.get(SIGNED_IN_AT)
    seen = session.get(SEEN_AT)
    if not isinstance(signed_in, int) or not isinstance(seen, int):
        return ""  # signed in before these limits: they count from this request
    if now - signed_in > settings.SESSION_COOKIE_AGE:
        return f"{settings.SESSION_COOKIE_AGE // 3600} hours after you signed in"
    if now - seen > settings.RECONCILE_SESSION_IDLE_SECONDS:
        return f"{settings.RECONCILE_SESSION_IDLE_SECONDS // 60} minutes without activity"
    return ""


class SessionLimitsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # An agent's request carries no session cookie: nothing is read for it.
        if settings.SESSION_COOKIE_NAME in request.COOKIES and SESSION_KEY in request.session:
            self._note_or_end(request)
        # django-htmx's middleware runs after this one: the header itself says htmx. A live
        # queue's check is a plain fetch that follows the same redirect (live.js).
        page_made = request.headers.get("HX-Request") == "true" or _background(request)
        if (
            page_made
            and not request.path.startswith(NOT_CONSOLE)
            and not request.user.is_authenticated
        ):
            return _to_sign_in(request)
        return self.get_response(request)

    def _note_or_end(self, request: HttpRequest) -> None:
        session = request.session
        now = int(time.time())
        ended = session_ended_because(session, now)
        if ended:
            username = request.user.get_username()
            logout(request)
            logger.info("console session of %s ended: %s", username, ended)
            messages.info(request, f"You were signed out {ended}. Sign in again to go on.")
            return
        if not isinstance(session.get(SIGNED_IN_AT), int):
            session[SIGNED_IN_AT] = now
        seen = session.get(SEEN_AT)
        if isinstance(seen, int) and _background(request):
            return
        if not isinstance(seen, int) or now - seen >= seen_resolution_seconds():
            session[SEEN_AT] = now


def _background(request: HttpRequest) -> bool:
    return request.headers.get(BACKGROUND_HEADER) == "1"


def seen_resolution_seconds() -> int:
    return max(1, min(SEEN_RESOLUTION_SECONDS, settings.RECONCILE_SESSION_IDLE_SECONDS // 10))


def _to_sign_in(request: HttpRequest) -> HttpResponse:
    """The client redirect, kept by no cache: the same URL asked by a page, not htmx, is the
    page itself (a cache keeping this 200 would answer it with an empty body)."""
    response = HttpResponseClientRedirect(_sign_in_url(request))
    add_never_cache_headers(response)
    patch_vary_headers(response, ("HX-Request", BACKGROUND_HEADER))
    return response


def _sign_in_url(request: HttpRequest) -> str:
    """The sign-in page, then back to the page the htmx request came from (its own path, not
    the fragment's URL; never another site's)."""
    current = urlsplit(request.headers.get("HX-Current-URL", ""))
    back = current.path if current.path.startswith("/") else "/"
    if current.query:
        back += f"?{current.query}"
    return f"{settings.LOGIN_URL}?{urlencode({'next': back})}"
