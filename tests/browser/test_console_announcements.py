"""The confirmation of an htmx action (messages.js) is announced: it joins a polite live region
that was on the page before it, as a live region must be (one inserted together with its
first message is not announced by screen readers)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.test_console_habits import sign_in
from tests.browser.test_console_offline import (  # noqa: F401 (fixtures)
    CHROMIUM,
    browser_page,
    console_data,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium"),
]


def test_the_first_confirmation_joins_a_live_region_already_on_the_page(
    live_server, browser_page, console_data
):
    page, traffic = browser_page
    sign_in(page, live_server.url, console_data["operator"].user.username)
    page.goto(f"{live_server.url}/contradictions/")
    region = page.locator("main .messages")
    expect(region).to_have_attribute("aria-live", "polite")
    expect(region).to_have_attribute("role", "status")
    assert region.evaluate("r => r.children.length") == 0
    assert region.evaluate("r => r.getBoundingClientRect().height") == 0, "an empty gap"
    region.evaluate("r => { r.dataset.fromTheStart = 'yes'; }")

    row = f"#contradiction-{console_data['contradiction'].pk}"
    page.fill(f"{row} input[name=note]", "Owner confirmed the hold.")
    page.press(f"{row} input[name=note]", "Enter")
    message = page.locator("main .messages[data-from-the-start] li")
    expect(message).to_have_count(1)
    expect(message).to_contain_text("resolved")
    assert page.locator("main .messages").count() == 1
    assert traffic.external == []
