"""The console in a real browser, on a closed network: every request stays on localhost.

Drives Debian's Chromium (never a downloaded one) against Django's live server, signs in
through the login form, reads the snapshots list and a snapshot detail, filters and resolves
through htmx, and fails if the page tried to reach any other host.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

CHROMIUM = Path("/usr/bin/chromium")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="needs Debian's Chromium at /usr/bin/chromium (apt-get install -y chromium)",
    ),
]

playwright_sync = pytest.importorskip("playwright.sync_api")

LOCAL_HOSTS = {"localhost", "127.0.0.1"}
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = Path(os.environ.get("RECONCILE_SCREENSHOTS", "/tmp"))
PASSWORD = "correct-horse-battery"


def close_connections_opened_under_playwright() -> None:
    """Close the database connections this thread opened while Playwright ran.

    Playwright's sync API keeps an event loop running in this thread, and Django keeps its
    connections per thread only when no loop runs: under the loop they are per context.
    Whatever the fixtures and the test opened meanwhile is not the connection the thread
    sees afterwards, so nothing would ever close it, and PostgreSQL would refuse to drop
    the test database at the end of the session ("accessed by other users")."""
    from django.db import connections

    connections.close_all()


class Traffic:
    """Every request the page made: local ones answered, any other host aborted and kept."""

    def __init__(self) -> None:
        self.external: list[str] = []
        self.statuses: dict[str, int] = {}

    def route(self, route: Any) -> None:
        url = route.request.url
        if urlparse(url).hostname in LOCAL_HOSTS:
            route.continue_()
        else:
            self.external.append(url)
            route.abort()

    def response(self, response: Any) -> None:
        self.statuses[urlparse(response.url).path] = response.status


@pytest.fixture
def browser_page(live_server: Any, monkeypatch: Any) -> Iterator[tuple[Any, Traffic]]:
    # Playwright's sync API runs an event loop in this thread; Django's ORM (used by the
    # fixtures and the database teardown, in this same thread) would otherwise refuse to run
    # "from an async context". Set for these tests only, not for the whole session.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    traffic = Traffic()
    with playwright_sync.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        context.route("**/*", traffic.route)
        page = context.new_page()
        page.on("response", traffic.response)
        page.set_default_timeout(10_000)
        try:
            yield page, traffic
        finally:
            context.close()
            browser.close()
            close_connections_opened_under_playwright()


@pytest.fixture
def console_data(transactional_db: Any, estate: Any, agent: Any) -> dict[str, Any]:
    from reconcile_app.models import Contradiction
    from tests.conftest import make_person
    from tests.reconcile_app.console.conftest import issue_snapshot

    person = make_person("olivia-operator", "operator", password=PASSWORD)
    snapshots = [
        issue_snapshot(agent, subject=f"account-{index}", claimed="collect" if index % 2 else None)
        for index in range(17, 23)
    ]
    return {
        "operator": person,
        "snapshot": snapshots[0],
        "contradiction": Contradiction.objects.order_by("pk").first(),
    }


def test_console_works_offline(live_server, browser_page, console_data):
    page, traffic = browser_page
    base = live_server.url

    # Anonymous: sent to the login form, then back where we were going.
    page.goto(f"{base}/snapshots/")
    assert "/accounts/login/" in page.url
    page.fill("input[name=username]", console_data["operator"].user.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r"/snapshots/$"))

    # The list rendered with real rows, its CSS and htmx loaded from this server.
    page.wait_for_selector("#snapshots tbody tr")
    assert page.locator("#snapshots tbody tr").count() == 6
    assert page.evaluate("typeof window.htmx") == "object"
    assert traffic.statuses.get("/static/reconcile/console.css") == 200
    assert traffic.statuses.get("/static/django_htmx/htmx-2.min.js") == 200
    header_colour = page.evaluate(
        "getComputedStyle(document.querySelector('.topbar')).backgroundColor"
    )
    assert header_colour == "rgb(23, 32, 43)", "console.css was not applied"
    page.screenshot(path=str(SCREENSHOTS / "console-snapshots.png"), full_page=True)

    # Filtering goes through htmx: the table is swapped and the URL says what is shown.
    page.fill("input[name=subject]", "account-18")
    page.press("input[name=subject]", "Enter")
    page.wait_for_url(re.compile(r"subject=account-18"))
    expect(page.locator("#snapshots tbody tr")).to_have_count(1)
    assert "decision_class=" not in page.url, "empty filters should not clutter the URL"

    # The detail page of a snapshot.
    snapshot_id = console_data["snapshot"].snapshot_id
    page.goto(f"{base}/snapshots/{snapshot_id}/")
    assert page.locator("h1").inner_text() == snapshot_id
    page.wait_for_selector("#fields tbody tr")
    assert page.locator("#evidence tbody tr").count() >= 1
    assert page.evaluate("typeof window.htmx") == "object"
    page.screenshot(path=str(SCREENSHOTS / "console-snapshot-detail.png"), full_page=True)

    # An operator resolves a contradiction in place (htmx POST with the CSRF header).
    row_id = f"#contradiction-{console_data['contradiction'].pk}"
    page.goto(f"{base}/contradictions/")
    page.fill(f"{row_id} input[name=note]", "Owner confirmed the hold.")
    page.click(f"{row_id} button[type=submit]")
    page.wait_for_selector(f"{row_id} .badge-green")
    assert "Owner confirmed the hold." in page.locator(row_id).inner_text()
    # The tab counts follow (re-read after the server's HX-Trigger).
    expect(page.locator("#contradiction-tabs .tab.active .tab-count")).to_have_text("2")
    page.screenshot(path=str(SCREENSHOTS / "console-contradictions.png"), full_page=True)

    assert traffic.external == [], f"tried to leave the closed network: {traffic.external}"
    failed = {path: status for path, status in traffic.statuses.items() if status >= 400}
    assert not failed, failed
