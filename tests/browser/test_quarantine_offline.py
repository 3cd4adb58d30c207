"""Quarantine in a real browser, offline: an operator quarantines a source through the dialog
(preview count, typed confirmation), sees it applied without reloading, lifts it with a
reason, watches a memory class's row poll until its task lands, and reads the audit page.

Same closed network as test_console_offline: Debian's Chromium, Django's live server, every
request to another host aborted and reported. The live server runs in this process, so the
Celery app is eager here (restored afterwards): the apply task runs on commit, inside the
request. The page's CSP forbids eval, so waits use selectors, never `wait_for_function`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from tests.browser.test_console_offline import (
    CHROMIUM,
    PASSWORD,
    SCREENSHOTS,
    browser_page,  # noqa: F401 (a fixture)
)
from tests.browser.test_console_triage import (
    assert_clean,
    eager_celery,  # noqa: F401 (a fixture)
    sign_in,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium"
    ),
]

SOURCE_ROW = "#target-source-case-service"
CLASS_ROW = "#target-memory-class-episodic"


@contextmanager
def apply_task_held() -> Iterator[None]:
    """The apply task is enqueued but no worker has taken it yet."""
    from reconcile_app import tasks

    delay = tasks.quarantine_apply_task.delay
    tasks.quarantine_apply_task.delay = lambda *args, **kwargs: None
    try:
        yield
    finally:
        tasks.quarantine_apply_task.delay = delay


@pytest.fixture
def quarantine_data(
    transactional_db: Any, estate: Any, agent: Any, eager_celery: Any
) -> dict[str, Any]:
    from tests.conftest import make_person
    from tests.reconcile_app.console.conftest import issue_snapshot

    operator = make_person("olivia-operator", "operator", password=PASSWORD)
    # Reads case-service, with a remembered claim of class "episodic".
    issue_snapshot(agent, subject="account-17", claimed="collect")
    return {"operator": operator}


def open_dialog(page: Any, row: str, link: str, ready: str) -> None:
    page.click(f"{row} a:has-text('{link}')")
    page.wait_for_selector(f"#ops-dialog[open] {ready}")


def test_operator_quarantines_a_source_and_lifts_it(live_server, browser_page, quarantine_data):
    from reconcile_app.models import AuditEvent, Quarantine
    from reconcile_app.services.quarantine import quarantine_apply

    page, traffic = browser_page
    base = live_server.url
    sign_in(page, base, quarantine_data["operator"].user.username, "/quarantine/")
    assert page.get_attribute(SOURCE_ROW, "data-state") == "trusted"
    assert traffic.statuses.get("/static/reconcile/dialog.js") == 200
    page.evaluate("window.__notReloaded = true")

    # The dialog: what the quarantine would touch, then a reason and the name typed out.
    open_dialog(page, SOURCE_ROW, "Quarantine…", "#quarantine-preview")
    assert page.inner_text("#quarantine-preview li[data-name='snapshots'] strong") == "1"
    submit = page.locator("#quarantine-submit")
    assert submit.is_disabled()
    page.fill("#quarantine-reason", "The owner reports corrupt exports since 09:00.")
    page.fill("#quarantine-confirm", "case-servic")
    assert submit.is_disabled(), "a near miss must not confirm"
    page.fill("#quarantine-confirm", "case-service")
    assert submit.is_enabled()
    # The viewport only: a modal's backdrop covers what is on screen, not the whole page.
    page.screenshot(path=str(SCREENSHOTS / "console-quarantine-dialog.png"))
    submit.click()

    # The row changes in place (the eager task applied it on commit); the dialog closes and
    # the history and timeline re-read themselves.
    page.wait_for_selector(f"{SOURCE_ROW}[data-state='applied']")
    page.wait_for_selector("#ops-dialog", state="hidden")
    assert "1 snapshots" in page.inner_text(f"{SOURCE_ROW} td:nth-child(8)").replace("\n", " ")
    assert "olivia-operator" in page.inner_text(SOURCE_ROW)
    page.wait_for_selector("#quarantine-history tbody tr[id^='quarantine-qua_']")
    page.wait_for_selector("#quarantine-timeline tr[data-action='quarantine.create']")
    assert page.evaluate("window.__notReloaded") is True
    quarantine = Quarantine.objects.get(target="case-service")
    assert quarantine.status == "applied" and quarantine.affected["snapshots"] == 1
    page.screenshot(path=str(SCREENSHOTS / "console-quarantine-applied.png"), full_page=True)

    # Lift, with a reason.
    open_dialog(page, SOURCE_ROW, "Lift…", "#lift-form")
    page.fill("#lift-reason", "The owner re-ran the export; checksums match.")
    page.click("#lift-submit")
    page.wait_for_selector(f"{SOURCE_ROW}[data-state='trusted']")
    page.wait_for_selector("#ops-dialog", state="hidden")
    page.wait_for_selector("#quarantine-timeline tr[data-action='quarantine.lift']")
    page.wait_for_selector(f"#quarantine-{quarantine.quarantine_id} .badge-grey")
    assert page.evaluate("window.__notReloaded") is True
    quarantine.refresh_from_db()
    assert quarantine.status == "lifted"
    events = {event.action: event for event in AuditEvent.objects.filter(object_kind="quarantine")}
    assert set(events) == {"quarantine.create", "quarantine.lift"}
    assert all(event.request_id for event in events.values())
    assert events["quarantine.lift"].reason == "The owner re-ran the export; checksums match."

    # A memory class whose task no worker has taken yet: the row says "applying" and asks the
    # server every 2s, then shows the worker's result (played here by the test).
    with apply_task_held():
        open_dialog(page, CLASS_ROW, "Quarantine…", "#quarantine-preview")
        page.fill("#quarantine-reason", "Episodic notes imported from a poisoned backup.")
        page.fill("#quarantine-confirm", "episodic")
        page.click("#quarantine-submit")
        page.wait_for_selector(f"{CLASS_ROW}[data-state='applying'][data-polling='true']")
    held = Quarantine.objects.get(target="episodic")
    quarantine_apply(quarantine_id=held.quarantine_id)
    page.wait_for_selector(
        f"{CLASS_ROW}[data-state='applied'][data-polling='false']", timeout=8_000
    )
    assert page.evaluate("window.__notReloaded") is True
    page.screenshot(path=str(SCREENSHOTS / "console-quarantine.png"), full_page=True)

    # The audit page lists all of it; filters go in the URL and into the export link.
    page.goto(f"{base}/audit/")
    page.wait_for_selector("#audit tbody tr[id^='audit-']")
    page.screenshot(path=str(SCREENSHOTS / "console-audit.png"), full_page=True)
    page.fill("input[name=action]", "quarantine.lift")
    page.press("input[name=action]", "Enter")
    page.wait_for_url(re.compile(r"action=quarantine\.lift"))
    page.wait_for_selector("#audit tbody tr[id^='audit-'] >> nth=0")
    page.wait_for_selector("#audit-export[href$='?action=quarantine.lift']")
    assert page.locator("#audit tbody tr").count() == 1

    assert_clean(traffic)
