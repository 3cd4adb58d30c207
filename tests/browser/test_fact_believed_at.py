"""An auditor asks a fact key's page what was believed at a past second, in a real browser,
offline: the picker swaps the region through htmx and the URL keeps the question."""

from __future__ import annotations

import re
import time
from datetime import timedelta
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.test_console_offline import (
    CHROMIUM,
    PASSWORD,
    SCREENSHOTS,
    browser_page,  # noqa: F401 (a fixture)
)
from tests.browser.test_console_triage import _registry_evidence, assert_clean, sign_in

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium"
    ),
]

KEY = "baseline.reading-eval"


@pytest.fixture
def rebaselined(transactional_db: Any, estate: Any, agent: Any) -> dict[str, Any]:
    """v17 at r17; more than a second later, r18 and v18 superseding it (the picker's unit
    is the second)."""
    from reconcile_app.models import MemoryRecord
    from tests.conftest import make_person
    from tests.reconcile_app.facts.conftest import authority, remember

    auditor = make_person("ada-auditor", "auditor", password=PASSWORD)
    _registry_evidence()
    authority(KEY, revision="registry@r17")
    remember(agent, KEY, "reading-v17", "ckpt-0412", "registry@r17")
    time.sleep(1.2)
    authority(KEY, revision="registry@r18")
    remember(agent, KEY, "reading-v18", "ckpt-0601", "registry@r18", supersedes="reading-v17")
    v17 = MemoryRecord.objects.get(memory_id="reading-v17").recorded_at
    # The first whole second after v17 was recorded, before the registry moved on.
    then = v17.replace(microsecond=0) + timedelta(seconds=1)
    return {"auditor": auditor, "then": then.strftime("%Y-%m-%dT%H:%M:%S")}


def test_auditor_picks_a_past_second_and_sees_what_was_believed(
    live_server, browser_page, rebaselined
):
    from reconcile_app.models import Escalation

    page, traffic = browser_page
    sign_in(page, live_server.url, rebaselined["auditor"].user.username, f"/facts/{KEY}/")
    expect(page.locator("#selection")).to_contain_text("ckpt-0601")
    page.evaluate("window.__notReloaded = true")

    # One field only: each change swaps the region (and its form) through htmx. The rule is
    # then applied on the as_of's date; a resubmit asks the same question again.
    page.fill("#fact-when input[name=as_of]", rebaselined["then"])
    page.click("#fact-when button[type=submit]")

    expect(page.locator("#believed-lede")).to_be_visible()
    expect(page.locator("#selection")).to_contain_text("ckpt-0412")
    expect(page.locator("#authority")).to_contain_text("registry@r17")
    expect(page.locator("#memory-reading-v18 .status-then")).to_have_text("recorded later")
    expect(page.locator("#memory-reading-v17 .status-then")).to_have_text("current")
    assert page.evaluate("window.__notReloaded") is True  # swapped in place, not reloaded
    # A datetime-local input leaves off seconds of :00 (08:51:00 is sent as 08:51): it failed
    # once a minute in sixty, when the fixture's second fell on a whole minute.
    sent = rebaselined["then"].removesuffix(":00").replace(":", "%3A")
    page.wait_for_url(re.compile(r"as_of=" + re.escape(sent) + r"(%3A00)?(&|$)"))
    page.screenshot(path=str(SCREENSHOTS / "console-fact-believed-at.png"), full_page=True)

    # Clear goes back to today's answer.
    page.click("#fact-when a:has-text('Clear')")
    expect(page.locator("#selection")).to_contain_text("ckpt-0601")
    assert not Escalation.objects.exists()
    assert_clean(traffic)
