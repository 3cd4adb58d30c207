"""Keyboard focus survives the console's htmx swaps (static/reconcile/focus.js).

A keyboard or screen-reader operator who presses Enter on a tab, a sort link or a row's
Resolve, or whose overview refreshes itself, must not be thrown back to <body> (the top of the
page): focus lands on the same control in the new content, on the field the answer marks
invalid, or on the row that changed.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.test_console_habits import sign_in
from tests.browser.test_console_offline import (  # noqa: F401 (fixtures)
    CHROMIUM,
    browser_page,
    console_data,
)
from tests.browser.test_console_triage import eager_celery  # noqa: F401 (a fixture)
from tests.browser.test_quarantine_offline import quarantine_data  # noqa: F401 (a fixture)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium"),
]

FOCUSED = (
    "() => { const e = document.activeElement; return e === document.body ? 'BODY' : "
    "(e.id ? '#' + e.id : e.tagName + ':' + (e.getAttribute('href') || e.textContent.trim()))}"
)


def press_enter_on(page: Any, selector: str) -> None:
    page.locator(selector).focus()
    with page.expect_response(lambda response: response.request.headers.get("hx-request")):
        page.keyboard.press("Enter")
    page.wait_for_timeout(150)  # htmx settles 20 ms after the swap


def test_tabs_and_sort_links_keep_focus_after_their_swap(live_server, browser_page, console_data):
    page, traffic = browser_page
    sign_in(page, live_server.url, console_data["operator"].user.username)
    page.goto(f"{live_server.url}/contradictions/")
    press_enter_on(page, "#contradiction-tabs a[href$='status=resolved']")
    expect(page).to_have_url(f"{live_server.url}/contradictions/?status=resolved")
    assert page.evaluate(FOCUSED) == "A:/contradictions/?status=resolved"

    page.goto(f"{live_server.url}/snapshots/")
    press_enter_on(page, "#snapshots thead a.sort >> nth=0")
    assert page.evaluate("document.activeElement.matches('#snapshots thead a.sort')"), (
        page.evaluate(FOCUSED)
    )
    assert traffic.external == []


def test_resolving_a_contradiction_keeps_focus_on_its_row(live_server, browser_page, console_data):
    page, _ = browser_page
    sign_in(page, live_server.url, console_data["operator"].user.username)
    page.goto(f"{live_server.url}/contradictions/")
    row = f"#contradiction-{console_data['contradiction'].pk}"
    note = f"{row} input[name=note]"
    # A blank note is refused: focus is on the field, which says why.
    page.locator(note).fill("   ")
    press_enter_on(page, note)
    expect(page.locator(note)).to_have_attribute("aria-invalid", "true")
    assert page.evaluate(f"document.activeElement === document.querySelector('{note}')")
    # Resolved: the row (shown as the cursor row) has focus; the next Tab goes on from there.
    page.locator(note).fill("Owner confirmed the hold.")
    press_enter_on(page, note)
    expect(page.locator(f"{row} .resolution")).to_be_visible()
    assert page.evaluate(f"document.activeElement === document.querySelector('{row}')")
    expect(page.locator(row)).to_have_class(re.compile(r"\brow-cursor\b"))


def test_the_overview_refreshing_itself_leaves_focus_where_it_was(
    live_server, browser_page, console_data, monkeypatch
):
    from reconcile_app.console.views import overview

    monkeypatch.setattr(overview, "LIVE_SECONDS", 1)
    page, _ = browser_page
    sign_in(page, live_server.url, console_data["operator"].user.username)
    link = page.locator("#overview-region .window-picker a").first
    href = link.get_attribute("href")
    link.focus()
    page.evaluate("document.getElementById('overview-region').dataset.old = 'yes'")
    # live.js re-reads the region in place: wait for a new one.
    for _ in range(80):
        page.wait_for_timeout(100)
        if not page.evaluate("document.getElementById('overview-region').dataset.old"):
            break
    else:
        pytest.fail("the overview did not refresh itself")
    page.wait_for_timeout(150)
    assert page.evaluate(FOCUSED) == f"A:{href}"


def test_after_the_quarantine_dialog_focus_is_on_the_row_it_changed(
    live_server, browser_page, quarantine_data
):
    page, traffic = browser_page
    sign_in(page, live_server.url, quarantine_data["operator"].user.username)
    page.goto(f"{live_server.url}/quarantine/")
    row = "#target-source-case-service"
    press_enter_on(page, f"{row} a[data-opens-dialog]")
    expect(page.locator("#ops-dialog")).to_have_attribute("open", "")
    assert page.evaluate(FOCUSED) == "#quarantine-reason"
    page.keyboard.type("Owner outage: reads are wrong.")
    page.fill("#quarantine-confirm", "case-service")
    press_enter_on(page, "#quarantine-submit")
    expect(page.locator("#ops-dialog")).not_to_have_attribute("open", "")
    expect(page.locator(f"{row} a[data-opens-dialog]")).to_have_text(re.compile("Lift"))
    assert page.evaluate(f"document.activeElement === document.querySelector('{row}')")
    assert traffic.external == []
