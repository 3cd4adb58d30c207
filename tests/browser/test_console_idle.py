"""A console left open is signed out for idleness like any other: in a real browser, the
page's own refreshes (a live queue's checks, the overview's re-reads, a pending effect's
polling) say they are no activity, and once the session has ended the next refresh takes the
page to sign-in instead of showing the queue on.

Before, every refresh counted as the person's activity: a console open on a live queue
stayed signed in to an operator's powers for twelve hours.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from tests.browser.test_console_live import live_data  # noqa: F401 (a fixture)
from tests.browser.test_console_offline import (
    CHROMIUM,
    browser_page,  # noqa: F401 (a fixture)
)
from tests.browser.test_console_triage import (
    eager_celery,  # noqa: F401 (a fixture)
    sign_in,
    triage_data,  # noqa: F401 (a fixture)
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium"
    ),
]

BACKGROUND = "x-reconcile-background"


def page_requests(page: Any, path: str) -> list[Any]:
    """Every request the page makes from now on to `path` (its query aside)."""
    seen: list[Any] = []

    def note(request: Any) -> None:
        if urlsplit(request.url).path == path:
            seen.append(request)

    page.on("request", note)
    return seen


def idle_for(page: Any, minutes: int) -> None:
    """Move the browser's session's last-seen time into the past."""
    from django.conf import settings
    from django.contrib.sessions.backends.db import SessionStore

    (cookie,) = [c for c in page.context.cookies() if c["name"] == settings.SESSION_COOKIE_NAME]
    session = SessionStore(session_key=cookie["value"])
    session["reconcile_seen_at"] -= minutes * 60
    session.save()


def sent_to_sign_in(page: Any, back: str) -> None:
    """The page went to the sign-in page by itself, to come back to `back`."""

    def there(url: str) -> bool:
        parts = urlsplit(url)
        return parts.path == "/accounts/login/" and parse_qs(parts.query) == {"next": [back]}

    page.wait_for_url(there, timeout=8_000)


def test_a_live_queue_left_alone_goes_to_sign_in(live_server, browser_page, live_data):
    page, _ = browser_page
    sign_in(page, live_server.url, live_data["operator"].user.username, "/effects/")
    checks = page_requests(page, "/effects/")
    expect(page.locator("[data-live-state]")).to_have_text("Live: checks every 1 s")
    page.wait_for_timeout(2_500)
    polls = [request for request in checks if "live=" in request.url]
    assert polls, "the live queue did not check for news"
    assert all(request.headers.get(BACKGROUND) == "1" for request in polls)

    idle_for(page, 31)

    sent_to_sign_in(page, "/effects/")
    expect(page.locator("body")).to_contain_text("You were signed out 30 minutes without activity")


def test_the_overview_rereading_itself_is_no_activity(live_server, browser_page, live_data):
    page, _ = browser_page
    sign_in(page, live_server.url, live_data["operator"].user.username, "/")
    rereads = page_requests(page, "/")
    page.wait_for_timeout(2_500)
    assert rereads, "the overview did not re-read itself"
    assert all(request.headers.get(BACKGROUND) == "1" for request in rereads)

    idle_for(page, 31)

    sent_to_sign_in(page, "/")


def test_a_pending_effect_polling_is_no_activity(live_server, browser_page, triage_data):
    page, _ = browser_page
    sign_in(page, live_server.url, triage_data["operator"].user.username, "/effects/")
    polls = page_requests(page, "/effects/a-browser/status/")
    page.goto(f"{live_server.url}/effects/a-browser/")
    page.wait_for_selector("#effect-status[data-polling='true']")
    page.wait_for_timeout(4_500)
    assert polls, "the pending effect's panel did not poll"
    assert all(request.headers.get(BACKGROUND) == "1" for request in polls)

    idle_for(page, 31)

    sent_to_sign_in(page, "/effects/a-browser/")
