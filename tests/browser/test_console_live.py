"""A live queue in a real browser, offline: new unknown outcomes are announced ("1 new —
show"), never slid under the cursor; pausing stops the checks and is remembered by the
browser; the overview re-reads itself in place and its bars lead to their lists.

The poll interval is shortened to one second for the test (the product's is ten).
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.test_console_offline import (
    CHROMIUM,
    PASSWORD,
    browser_page,  # noqa: F401 (a fixture)
)
from tests.browser.test_console_triage import assert_clean, sign_in, tasks_lost

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium"
    ),
]

ROWS = "#effects tbody tr"


@pytest.fixture
def live_data(transactional_db: Any, estate: Any, agent: Any, monkeypatch: Any) -> dict[str, Any]:
    from reconcile_app.console import live
    from reconcile_app.console.views import overview
    from tests.conftest import make_person
    from tests.reconcile_app.console.conftest import commit_effect

    monkeypatch.setattr(live, "LIVE_SECONDS", 1)
    monkeypatch.setattr(overview, "LIVE_SECONDS", 1)
    operator = make_person("olivia-operator", "operator", password=PASSWORD)
    with tasks_lost():
        commit_effect(agent, "live-1", fault="timeout_after_commit")
    return {"operator": operator, "agent": agent}


def lose_an_answer(agent: Any, key: str) -> None:
    from tests.reconcile_app.console.conftest import commit_effect

    with tasks_lost():
        assert commit_effect(agent, key, fault="timeout_after_commit").status == "unknown"


def test_the_queue_announces_new_rows_and_pauses(live_server, browser_page, live_data):
    page, traffic = browser_page
    base = live_server.url
    sign_in(page, base, live_data["operator"].user.username, "/effects/")
    expect(page.locator(ROWS)).to_have_count(1)
    expect(page.locator("[data-live-state]")).to_have_text("Live: checks every 1 s")
    toggle = page.locator("[data-live-toggle]")
    expect(toggle).to_have_text("Pause live updates")
    # The label says what a press does; a pressed state beside it contradicted it.
    assert toggle.get_attribute("aria-pressed") is None

    # A new unknown outcome: announced, and the table stays as it was until asked.
    lose_an_answer(live_data["agent"], "live-2")
    show = page.locator("[data-live-show]")
    expect(show).to_have_text("1 new — show", timeout=8_000)
    expect(page.locator(ROWS)).to_have_count(1)
    show.click()
    expect(page.locator(ROWS)).to_have_count(2)
    expect(page.locator("[data-live-show]")).to_be_hidden()
    assert page.url.endswith("/effects/")

    # Paused: nothing is checked, and the browser remembers it across pages.
    toggle.click()
    expect(toggle).to_have_text("Resume live updates")
    assert toggle.get_attribute("aria-pressed") is None
    expect(page.locator("[data-live-state]")).to_have_text("Paused: this page is not refreshing")
    lose_an_answer(live_data["agent"], "live-3")
    polls_before = sum(1 for path in traffic.statuses if "live=" in path)
    time.sleep(2.5)
    assert sum(1 for path in traffic.statuses if "live=" in path) == polls_before
    expect(page.locator("[data-live-show]")).to_be_hidden()
    page.reload()
    expect(page.locator("[data-live-toggle]")).to_have_text("Resume live updates")

    # Resumed: the news is there at the next check (the reload already shows live-3).
    expect(page.locator(ROWS)).to_have_count(3)
    lose_an_answer(live_data["agent"], "live-4")
    page.locator("[data-live-toggle]").click()
    expect(page.locator("[data-live-show]")).to_have_text("1 new — show", timeout=8_000)
    assert_clean(traffic)


def test_the_overview_refreshes_in_place_and_its_bars_lead_somewhere(
    live_server, browser_page, live_data
):
    page, traffic = browser_page
    base = live_server.url
    sign_in(page, base, live_data["operator"].user.username, "/")
    expect(page.locator("#stat-unknown")).to_have_text("1")
    page.evaluate("window.__notReloaded = true")
    lose_an_answer(live_data["agent"], "live-2")
    expect(page.locator("#stat-unknown")).to_have_text("2", timeout=8_000)
    assert page.evaluate("window.__notReloaded") is True

    # The window picker swaps the figures and keeps the URL honest.
    page.click(".window-picker a:has-text('7 d')")
    page.wait_for_url(re.compile(r"\?hours=168$"))
    expect(page.locator(".window-picker a[aria-current='true']")).to_have_text("7 d")

    # A bar of the unknown outcomes chart opens that effect.
    page.wait_for_selector("#chart-unknown[data-ready='true']")
    page.locator("#chart-unknown .bars .point path").first.click(force=True)
    page.wait_for_url(re.compile(r"/effects/live-\d/$"))
    assert_clean(traffic)


def test_older_rows_entering_or_leaving_the_queue_are_announced(
    live_server, browser_page, live_data
):
    """After an outage an effect sent earlier becomes unknown: older than the newest row, it
    still counts as news; a row settled elsewhere is announced as gone."""
    from reconcile_app.models import Effect
    from tests.reconcile_app.console.conftest import commit_effect

    with tasks_lost():
        earlier = commit_effect(live_data["agent"], "live-earlier", fault=None)
    Effect.objects.filter(pk=earlier.pk).update(status="accepted")
    lose_an_answer(live_data["agent"], "live-2")
    page, traffic = browser_page
    sign_in(page, live_server.url, live_data["operator"].user.username, "/effects/")
    expect(page.locator(ROWS)).to_have_count(2)
    show = page.locator("[data-live-show]")

    Effect.objects.filter(pk=earlier.pk).update(status="unknown")
    expect(show).to_have_text("1 new — show", timeout=8_000)
    Effect.objects.filter(idempotency_key="live-2").update(status="not_executed")
    Effect.objects.filter(idempotency_key="live-1").update(status="not_executed")
    expect(show).to_have_text("1 gone — show", timeout=8_000)
    Effect.objects.filter(pk=earlier.pk).update(status="accepted")
    Effect.objects.filter(idempotency_key="live-2").update(status="unknown")
    Effect.objects.filter(idempotency_key="live-1").update(status="unknown")
    expect(show).to_be_hidden(timeout=8_000)
    # As many came as went: the count alone would hide it.
    Effect.objects.filter(pk=earlier.pk).update(status="unknown")
    Effect.objects.filter(idempotency_key="live-1").update(status="not_executed")
    expect(show).to_have_text("listed rows changed — show", timeout=8_000)
    show.click()
    expect(page.locator(ROWS)).to_have_count(2)
    expect(show).to_be_hidden()
    assert_clean(traffic)


def test_the_overview_says_once_that_the_database_is_out_of_reach(
    live_server, browser_page, live_data, monkeypatch
):
    """Its refreshes fail (503) through an outage: the page keeps its figures and charts and
    shows one message, not one per refresh, until a refresh succeeds (server_errors.py,
    messages.js, charts.js)."""
    from django.db import OperationalError

    from reconcile_app.console.views import overview

    page, traffic = browser_page
    sign_in(page, live_server.url, live_data["operator"].user.username, "/")
    expect(page.locator("#stat-unknown")).to_have_text("1")
    page.wait_for_selector("#chart-unknown[data-ready='true']")
    drawn = page.locator("[data-chart] svg.main-svg")
    charts = drawn.count()
    assert charts > 0

    def refused(self, **kwargs):
        raise OperationalError("could not connect to server: Connection refused")

    drawing = overview.OverviewView.get_context_data
    refused_answers: list[str] = []
    page.on("response", lambda answer: answer.status == 503 and refused_answers.append(answer.url))
    monkeypatch.setattr(overview.OverviewView, "get_context_data", refused)
    message = page.locator("main .messages .message-error")
    expect(message).to_contain_text(
        "Reconcile cannot reach its database (database_unavailable); try again in 5 seconds",
        timeout=8_000,
    )
    # More refreshes, each refused (waiting in Playwright: its routing answers meanwhile).
    page.wait_for_timeout(2_500)
    assert len(refused_answers) >= 2, refused_answers
    expect(message).to_have_count(1)
    expect(page.locator("#stat-unknown")).to_have_text("1")
    expect(drawn).to_have_count(charts)  # nothing was swapped, so nothing was cleared

    # Back: the next refresh succeeds and the message goes. (Not `monkeypatch.undo()`: the
    # browser fixture's own settings ride on the same monkeypatch.)
    monkeypatch.setattr(overview.OverviewView, "get_context_data", drawing)
    expect(message).to_have_count(0, timeout=8_000)
    expect(drawn).to_have_count(charts)
    assert traffic.external == []


def test_news_that_has_not_changed_is_not_announced_again(live_server, browser_page, live_data):
    """The "n new — show" button sits in a polite live region: writing it again at every
    poll, with the same words, has a screen reader say it again every few seconds."""
    page, traffic = browser_page
    sign_in(page, live_server.url, live_data["operator"].user.username, "/effects/")
    lose_an_answer(live_data["agent"], "live-2")
    expect(page.locator("[data-live-show]")).to_have_text("1 new — show", timeout=8_000)
    page.evaluate(
        """() => { window.liveChanges = 0;
          new MutationObserver((changes) => { window.liveChanges += changes.length; }).observe(
            document.querySelector('[data-live] [role=status]'),
            {childList: true, subtree: true, characterData: true}); }"""
    )
    polls: list[str] = []
    page.on(
        "request", lambda request: polls.append(request.url) if "live=" in request.url else None
    )
    # A bar polls again only once its last answer is shown (live.js's busy mark), so a third
    # request proves two answers were written; counted, not timed: a loaded machine polls late.
    for _ in range(80):
        if len(polls) >= 3:
            break
        page.wait_for_timeout(250)
    assert len(polls) >= 3
    assert page.evaluate("window.liveChanges") == 0
    assert_clean(traffic)
