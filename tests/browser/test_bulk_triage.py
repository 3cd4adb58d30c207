"""Bulk triage after an outage, in a real browser, offline: twenty unknown outcomes re-checked
as one job, each concluded once, the job's progress followed live, one job in the audit log.

Same closed network as test_console_offline. The job's task is lost when the page queues it
(as if no worker had picked it up yet), so the job page shows it running and polls; the test
then plays the worker, and the page follows without a reload. The readbacks the job's
resolutions queue run eagerly, in process.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from playwright.sync_api import expect

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
    tasks_lost,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium"
    ),
]

OUTAGE = 20
REASON = "case-service outage 09:00-09:20: answers lost after commit"


@contextmanager
def job_task_lost() -> Iterator[list[str]]:
    """The bulk job's task is queued but no worker has taken it: the ids it was sent."""
    from reconcile_app import tasks

    sent: list[str] = []
    original = tasks.bulk_job_run_task.delay
    tasks.bulk_job_run_task.delay = lambda job_id: sent.append(job_id)  # type: ignore[assignment]
    try:
        yield sent
    finally:
        tasks.bulk_job_run_task.delay = original  # type: ignore[method-assign]


@pytest.fixture
def outage(transactional_db: Any, estate: Any, agent: Any, eager_celery: Any) -> dict[str, Any]:
    from tests.conftest import make_person
    from tests.reconcile_app.console.conftest import commit_effect

    operator = make_person("olivia-operator", "operator", password=PASSWORD)
    with tasks_lost():
        # The owner committed each command but its answers were lost, and so were the
        # resolution tasks: twenty outcomes nobody has proven.
        effects = [
            commit_effect(agent, f"outage-{n:02}", fault="timeout_after_commit")
            for n in range(OUTAGE)
        ]
    assert {effect.status for effect in effects} == {"unknown"}
    return {"operator": operator, "effects": effects}


def test_bulk_recheck_of_twenty_unknown_outcomes(live_server, browser_page, outage):
    from reconcile_app.models import AuditEvent, BulkJob, Effect
    from reconcile_app.services.bulk_jobs import bulk_job_run
    from sandbox_app.models import SandboxEffect, SandboxRecord

    page, traffic = browser_page
    base = live_server.url
    sign_in(page, base, outage["operator"].user.username, "/effects/")

    page.wait_for_selector("#effects tbody tr")
    expect(page.locator("#effects tbody tr")).to_have_count(OUTAGE)
    assert page.locator("#bulk-matching").inner_text() == str(OUTAGE)

    # Ticking rows counts them and chooses "the rows I tick"; the header box ticks the page.
    page.check("#bulk-scope-filter")
    page.check("#effects input.bulk-pick[value='outage-03']")
    expect(page.locator("#bulk-form .bulk-picked")).to_have_text("(1 ticked)")
    assert page.is_checked("#bulk-scope-selected")
    page.check("#effects input.bulk-pick-all")
    expect(page.locator("#bulk-form .bulk-picked")).to_have_text(f"({OUTAGE} ticked)")
    page.uncheck("#effects input.bulk-pick-all")

    # All twenty matching the filters, re-checked: the preview shows the count and a sample.
    page.check("#bulk-scope-filter")
    page.select_option("#bulk-do", "readback")
    page.click("#bulk-preview")
    page.wait_for_url(re.compile(r"/bulk/effects/\?"))
    assert page.locator("#bulk-count").inner_text() == str(OUTAGE)
    expect(page.locator("#sample tbody tr")).to_have_count(10)
    page.screenshot(path=str(SCREENSHOTS / "console-bulk-preview.png"), full_page=True)

    # Above the threshold the count must be typed (the server checks it as well).
    page.fill("#bulk-reason", REASON)
    page.fill("#bulk-typed", "20")
    with job_task_lost() as sent:
        page.click("#bulk-submit")
        page.wait_for_url(re.compile(r"/jobs/job_[0-9a-f]+/$"))
    job = BulkJob.objects.get()
    assert sent == [job.job_id]
    expect(page.locator("#job-region")).to_have_attribute("data-status", "running")
    assert page.locator("#job-region").get_attribute("data-polling") == "true"
    assert page.locator("#job-processed").inner_text() == "0"
    expect(page.locator("#job-cancel-form")).to_be_visible()
    page.screenshot(path=str(SCREENSHOTS / "console-bulk-job-running.png"), full_page=True)

    # The worker runs the job; the page follows it to the end without a reload.
    page.evaluate("window.__notReloaded = true")
    bulk_job_run(job_id=job.job_id)
    page.wait_for_selector("#job-region[data-status='done']", timeout=10_000)
    assert page.evaluate("window.__notReloaded") is True
    assert page.locator("#job-done").inner_text() == str(OUTAGE)
    assert page.locator("#job-failed").inner_text() == "0"
    assert page.locator("#job-region").get_attribute("data-polling") == "false"
    expect(page.locator("#job-cancel-form")).to_have_count(0)  # no cancelling what has ended
    expect(page.locator("#job-items tbody tr[data-state='done']")).to_have_count(OUTAGE)
    page.screenshot(path=str(SCREENSHOTS / "console-bulk-job-done.png"), full_page=True)

    # All concluded, none applied twice: one receipt per key, one version step per record.
    keys = [effect.idempotency_key for effect in outage["effects"]]
    assert set(
        Effect.objects.filter(idempotency_key__in=keys).values_list("status", flat=True)
    ) == {"verified"}
    assert SandboxEffect.objects.filter(idempotency_key__in=keys).count() == OUTAGE
    for effect in outage["effects"]:
        record = SandboxRecord.objects.get(subject=effect.subject, field=effect.field)
        assert record.version == effect.expected_version + 1

    # One job in the audit log, and every row it wrote carries its request id.
    # The job page's link follows the job's request id: its own row and each readback.
    page.click("#job-audit")
    page.wait_for_url(re.compile(r"/audit/\?request_id="))
    expect(page.locator("#audit tbody tr")).to_have_count(OUTAGE + 1)
    expect(page.locator(f'#audit a[href="/jobs/{job.job_id}/"]')).to_have_count(1)
    page.goto(f"{base}/audit/?action=bulk_job.create")
    expect(page.locator("#audit tbody tr")).to_have_count(1)
    rows = AuditEvent.objects.filter(request_id=job.request_id)
    assert job.request_id
    assert rows.filter(action="bulk_job.create").count() == 1
    assert sorted(rows.filter(action="effect.readback").values_list("object_ref", flat=True)) == (
        sorted(keys)
    )
    assert set(rows.values_list("actor_name", "reason")) == {
        (outage["operator"].user.username, REASON)
    }

    assert_clean(traffic)


@pytest.fixture
def long_keys(transactional_db: Any, estate: Any, agent: Any, eager_celery: Any) -> dict[str, Any]:
    """Twenty unknown outcomes whose keys, ticked together, make a URL of 3,000+ bytes."""
    from tests.conftest import make_person
    from tests.reconcile_app.console.conftest import commit_effect

    operator = make_person("olivia-operator", "operator", password=PASSWORD)
    with tasks_lost():
        keys = [
            commit_effect(
                agent, f"rc-{n:02}-{'k' * 140}", fault="timeout_after_commit"
            ).idempotency_key
            for n in range(OUTAGE)
        ]
    return {"operator": operator, "keys": keys}


def test_ticked_rows_too_long_for_a_url_open_their_preview(live_server, browser_page, long_keys):
    """The bar posts the preview when the ticked keys would not fit in a URL (bulk.js)."""
    page, traffic = browser_page
    sign_in(page, live_server.url, long_keys["operator"].user.username, "/effects/")
    page.wait_for_selector("#effects tbody tr")

    page.check("#effects input.bulk-pick-all")
    page.select_option("#bulk-do", "readback")
    page.click("#bulk-preview")

    page.wait_for_url(re.compile(r"/bulk/effects/$"))  # posted: nothing in the URL
    assert page.locator("#bulk-count").inner_text() == str(OUTAGE)
    expect(page.locator("#bulk-confirm input[name='key']")).to_have_count(OUTAGE)
    assert_clean(traffic)
