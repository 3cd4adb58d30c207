"""Times and dialogs as an operator outside UTC meets them, in real Chromium set to New York.

The time toggle rewrites every rendered time (UTC as the server writes it, the browser's
local time, or "n min ago") and is remembered across reloads; a date-time input in local mode
is read as New York time and reaches the server as the right UTC instant. Escape on a dialog
with a half-typed reason asks before it throws the text away.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import expect

from tests.browser.test_console_habits import new_page  # noqa: F401 (a fixture)
from tests.browser.test_console_offline import CHROMIUM, PASSWORD, console_data  # noqa: F401
from tests.browser.test_console_triage import eager_celery  # noqa: F401 (a fixture)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium"),
]

ZONE = "America/New_York"
NEW_YORK = ZoneInfo(ZONE)
SOURCE_ROW = "#target-source-case-service"


def sign_in(page: Any, base: str, username: str, path: str) -> None:
    page.goto(f"{base}{path}")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(re.escape(path) + "$"))


def shown_times(page: Any) -> list[tuple[str, str]]:
    """(datetime attribute, text) of the first few times with a time of day on the page."""
    return page.eval_on_selector_all(
        "main time[datetime*='T']",
        "els => els.slice(0, 5).map(e => [e.getAttribute('datetime'), e.textContent.trim()])",
    )


def instant(iso: str) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


def test_time_toggle_utc_local_relative_remembered(live_server, new_page, console_data):
    page, traffic = new_page(timezone_id=ZONE)
    base = live_server.url
    snapshot = console_data["snapshot"].snapshot_id
    sign_in(page, base, console_data["operator"].user.username, f"/snapshots/{snapshot}/")
    assert page.evaluate("Intl.DateTimeFormat().resolvedOptions().timeZone") == ZONE

    # UTC, as the server wrote it (the default).
    expect(page.locator("#time-mode")).to_have_value("utc")
    times = shown_times(page)
    assert times, "the snapshot page shows when it was issued"
    for iso, text in times:
        assert text == instant(iso).astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S"), (iso, text)
    utc_texts = [text for _, text in times]

    # Local: New York's wall clock, four or five hours behind; zone words follow.
    page.select_option("#time-mode", "local")
    times = shown_times(page)
    for iso, text in times:
        assert text == instant(iso).astimezone(NEW_YORK).strftime("%Y-%m-%d %H:%M:%S"), (iso, text)
    assert [text for _, text in times] != utc_texts
    zone_words = page.locator("main [data-zone-label]")
    if zone_words.count():
        expect(zone_words.first).not_to_have_text("UTC")

    # Relative: the snapshot was issued moments ago.
    page.select_option("#time-mode", "relative")
    texts = [text for _, text in shown_times(page)]
    assert all(re.search(r"ago|now|sec|min", text) for text in texts), texts
    # Its exact time stays one hover away.
    title = page.locator("main time[datetime*='T']").first.get_attribute("title")
    assert title and "UTC" in title

    # Remembered by this browser: after a reload, and on another page.
    page.reload()
    expect(page.locator("#time-mode")).to_have_value("relative")
    texts = [text for _, text in shown_times(page)]
    assert all(re.search(r"ago|now|sec|min", text) for text in texts), texts
    page.goto(f"{base}/snapshots/")
    expect(page.locator("#time-mode")).to_have_value("relative")
    page.select_option("#time-mode", "utc")
    page.reload()
    expect(page.locator("#time-mode")).to_have_value("utc")
    for iso, text in shown_times(page):
        assert text == instant(iso).astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
    assert traffic.external == []


@pytest.fixture
def quarantine_operator(transactional_db: Any, estate: Any, agent: Any, eager_celery: Any) -> Any:
    from tests.conftest import make_person
    from tests.reconcile_app.console.conftest import issue_snapshot

    operator = make_person("olivia-operator", "operator", password=PASSWORD)
    issue_snapshot(agent, subject="account-17", claimed="collect")
    return operator


def open_quarantine_dialog(page: Any) -> None:
    page.click(f"{SOURCE_ROW} a:has-text('Quarantine…')")
    page.wait_for_selector("#ops-dialog[open] #quarantine-preview")


def test_ends_at_in_local_mode_reaches_the_server_as_utc(
    live_server, new_page, quarantine_operator
):
    from reconcile_app.models import Quarantine

    page, traffic = new_page(timezone_id=ZONE)
    sign_in(page, live_server.url, quarantine_operator.user.username, "/quarantine/")
    page.select_option("#time-mode", "local")
    open_quarantine_dialog(page)
    # The label names the zone the picker is read in.
    label = page.locator("label[for='quarantine-ends-at']")
    expect(label).to_contain_text(ZONE)
    expect(label).not_to_contain_text("UTC")

    # Tomorrow 09:30 on a New York wall clock (EST or EDT: zoneinfo knows which).
    wall = (datetime.now(NEW_YORK) + timedelta(days=1)).replace(
        hour=9, minute=30, second=0, microsecond=0
    )
    page.fill("#quarantine-ends-at", wall.strftime("%Y-%m-%dT%H:%M"))
    page.fill("#quarantine-reason", "Exports corrupt until the owner's fix ships.")
    page.fill("#quarantine-confirm", "case-service")
    page.click("#quarantine-submit")
    page.wait_for_selector(f"{SOURCE_ROW}[data-state='applied']")

    stored = Quarantine.objects.get(target="case-service").ends_at
    assert stored == wall.astimezone(UTC), (stored, wall)
    assert stored.hour != 9, "read as UTC: the trap the toggle exists to close"
    assert traffic.external == []


def test_escape_asks_before_discarding_a_half_typed_reason(
    live_server, new_page, quarantine_operator
):
    page, traffic = new_page()
    sign_in(page, live_server.url, quarantine_operator.user.username, "/quarantine/")
    asked: list[str] = []
    answer = {"accept": False}

    def reply(prompt: Any) -> None:
        asked.append(prompt.message)
        if answer["accept"]:
            prompt.accept()
        else:
            prompt.dismiss()

    page.on("dialog", reply)

    # Nothing typed: Escape just closes, without asking.
    open_quarantine_dialog(page)
    page.keyboard.press("Escape")
    expect(page.locator("#ops-dialog")).to_be_hidden()
    assert asked == []

    # Half-typed, and the operator answers "keep it": the dialog and the text stay.
    open_quarantine_dialog(page)
    page.locator("#quarantine-reason").press_sequentially("Owner reports corrupt expo")
    page.keyboard.press("Escape")
    assert asked == ["Discard what you typed in this dialog?"]
    expect(page.locator("#ops-dialog[open]")).to_be_visible()
    expect(page.locator("#quarantine-reason")).to_have_value("Owner reports corrupt expo")

    # Typing on, then Escape and "discard": the dialog closes and the text is gone.
    page.locator("#quarantine-reason").press_sequentially("rts")
    answer["accept"] = True
    page.keyboard.press("Escape")
    expect(page.locator("#ops-dialog")).to_be_hidden()
    assert len(asked) == 2
    # The dialog's `close` event (which empties it) is dispatched after it is hidden.
    expect(page.locator("#quarantine-reason")).to_have_count(0)
    open_quarantine_dialog(page)
    expect(page.locator("#quarantine-reason")).to_have_value("")
    assert traffic.external == []
