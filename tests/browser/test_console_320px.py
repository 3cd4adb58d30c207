"""At 320 CSS px (a phone, or 1280 px zoomed to 400%) no console page scrolls sideways as a
whole (WCAG 1.4.10 reflow): the pager's links and the lineage explorer's depth picker wrap."""

from __future__ import annotations

import pytest

from tests.browser.test_console_habits import page_overflow, sign_in
from tests.browser.test_console_offline import (  # noqa: F401 (fixtures)
    CHROMIUM,
    browser_page,
    console_data,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium"),
]


def test_paged_lists_and_the_lineage_explorer_reflow_at_320px(
    live_server, browser_page, console_data
):
    from reconcile_app.services.audit import audit_record

    operator = console_data["operator"]
    for index in range(40):
        audit_record(
            actor=operator.user, action="token.create", object_kind="token", object_ref=f"t-{index}"
        )
    page, traffic = browser_page
    page.set_viewport_size({"width": 320, "height": 640})
    sign_in(page, live_server.url, operator.user.username)
    snapshot_id = console_data["snapshot"].snapshot_id
    paths = {
        "a list's fifth page of forty": "/audit/?per_page=1&page=5",
        "the lineage explorer": f"/lineage/?node=snapshot:{snapshot_id}",
    }
    for name, path in paths.items():
        assert page.goto(f"{live_server.url}{path}").status == 200, name
        page.wait_for_load_state("networkidle")
        assert page.locator("main .pager a, main #graph-depth").count() >= 1, name
        overflow, wide = page_overflow(page)
        assert overflow <= 0 and not wide, (name, overflow, wide)
    assert traffic.external == []
