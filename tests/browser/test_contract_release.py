"""A contract version goes live and is rolled back, in a real browser (issue 14), offline.

A reviewer opens /contracts/, opens the draft 7.4 of collections-contact-release, reads its
diff against the active 7.3, activates it with a rationale and the typed label, watches the
release gates finish without reloading, then rolls back to 7.3.

The live server runs in this process. The first activation's task is dropped on the way to
the broker and the test plays the worker (as test_console_triage plays a readback), so the
page is seen polling until the gates finish; the rollback runs its task eagerly, inside the
request. The gates are played through their interface (tests/reconcile_app/console/
contract_world.py), so the journey does not depend on what each gate checks.
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
)
from tests.conftest import COLLECTIONS
from tests.reconcile_app.console.contract_world import (  # noqa: F401 (a fixture)
    ACTIVE,
    DRAFT,
    gates,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium"
    ),
]


@contextmanager
def worker_busy() -> Iterator[None]:
    """Activation tasks sent meanwhile never reach a worker: the test will play it."""
    from reconcile_app import tasks

    task = tasks.contract_activation_task
    original = task.delay
    task.delay = lambda *args, **kwargs: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        task.delay = original  # type: ignore[method-assign]


@pytest.fixture
def release_world(
    transactional_db: Any, gates: Any, eager_celery: Any, tmp_path: Any
) -> dict[str, Any]:
    from reconcile_app.services.contracts import contracts_load
    from tests.conftest import ESTATE, make_person
    from tests.reconcile_app.console.contract_world import load_draft

    contracts_load(paths=[str(ESTATE)])
    draft = load_draft(tmp_path)
    reviewer = make_person("rhys-reviewer", "reviewer", password=PASSWORD)
    return {"reviewer": reviewer, "draft": draft}


def version_row(version: str) -> str:
    # Versions hold dots: a CSS id selector would need escaping, an attribute one does not.
    return f"#class-{COLLECTIONS} tr[data-version='{version}']"


def version_url(version: str) -> re.Pattern[str]:
    return re.compile(rf"/contracts/{COLLECTIONS}/{re.escape(version)}/$")


def activate_from_the_page(page: Any, label: str, rationale: str) -> None:
    """Rationale, then the label typed out: the button wakes only when it matches."""
    page.fill("#activate-rationale", rationale)
    page.fill("#activate-confirm", label[:-1])
    expect(page.locator("#activate-submit")).to_be_disabled()
    page.fill("#activate-confirm", label)
    expect(page.locator("#activate-submit")).to_be_enabled()
    page.click("#activate-submit")


def test_reviewer_activates_a_draft_then_rolls_back(live_server, browser_page, release_world):
    from reconcile_app.models import AuditEvent, Contract, ContractActivation
    from reconcile_app.services.contract_lifecycle import contract_activation_run

    page, traffic = browser_page
    base = live_server.url
    sign_in(page, base, release_world["reviewer"].user.username, "/contracts/")

    # Every class; collections-contact-release has the active 7.3 and the draft 7.4.
    versions = page.locator(f"#class-{COLLECTIONS} tbody tr")
    expect(versions).to_have_count(2)
    expect(page.locator(version_row(ACTIVE))).to_have_attribute("data-status", "active")
    expect(page.locator(version_row(DRAFT))).to_have_attribute("data-status", "draft")
    page.screenshot(path=str(SCREENSHOTS / "console-contracts.png"), full_page=True)

    # The draft, and its diff against the active version.
    page.click(f"{version_row(DRAFT)} a:has-text('{DRAFT}')")
    page.wait_for_url(version_url(DRAFT))
    expect(page.locator("#contract-status")).to_have_attribute("data-status", "draft")
    expect(page.locator("#adr")).to_contain_text(f"# ADR: {COLLECTIONS} {DRAFT}")
    page.click("#diff-against-active")
    page.wait_for_url(re.compile(rf"/diff/\?from={ACTIVE}&to={DRAFT}$"))
    expect(page.locator("#diff-fields tr[data-key=complaint_status]")).to_have_class("diff-changed")
    expect(page.locator("#diff-fields tr[data-key=complaint_status] mark")).to_have_count(2)
    expect(page.locator("#diff-rules tr[data-key='escalate 1']")).to_have_class("diff-changed")
    expect(page.locator("#diff-actions tr[data-key=release_collections_hold]")).to_have_class(
        "diff-changed"
    )
    expect(page.locator("#diff-settings tr[data-key=contradictions]")).to_have_class("diff-changed")
    page.screenshot(path=str(SCREENSHOTS / "console-contract-diff.png"), full_page=True)

    # Activate: the gates run in the worker; the page polls until they finish.
    page.click(f"#diff-summary a:has-text('{DRAFT}')")
    page.wait_for_url(version_url(DRAFT))
    expect(page.locator("#activate-does")).to_contain_text(f"{ACTIVE} retires")
    with worker_busy():
        activate_from_the_page(
            page, f"{COLLECTIONS}@{DRAFT}", "Complaints must be read before a release."
        )
        page.wait_for_url(version_url(DRAFT))
    expect(page.locator(".messages")).to_contain_text("the release gates are running")
    panel = page.locator("#contract-release")
    expect(panel).to_have_attribute("data-polling", "true")
    expect(panel).to_have_attribute("data-status", "running")
    page.evaluate("window.__notReloaded = true")
    page.screenshot(path=str(SCREENSHOTS / "console-contract-running.png"), full_page=True)

    running = ContractActivation.objects.get(contract=release_world["draft"])
    contract_activation_run(activation_id=running.activation_id)  # the worker

    page.wait_for_selector("#contract-release[data-status='activated']", timeout=8_000)
    assert page.evaluate("window.__notReloaded") is True
    expect(panel).to_have_attribute("data-polling", "false")
    expect(page.locator("#release-gates tr[data-gate]")).to_have_count(7)
    expect(page.locator("#release-gates tr[data-gate-status=passed]")).to_have_count(6)
    # The rest of the page re-read itself when the panel said the activation moved on.
    expect(page.locator("#contract-status")).to_have_attribute("data-status", "active")
    expect(page.locator("#activation-history tbody tr")).to_have_count(1)
    expect(page.locator("#activate-form")).to_have_count(0)
    page.screenshot(path=str(SCREENSHOTS / "console-contract-activated.png"), full_page=True)

    # Roll back to 7.3 (its task runs at once, inside the request).
    page.click(".crumbs a:has-text('Contracts')")
    page.wait_for_url(re.compile(r"/contracts/$"))
    expect(page.locator(version_row(ACTIVE))).to_have_attribute("data-status", "retired")
    page.click(f"{version_row(ACTIVE)} a:has-text('{ACTIVE}')")
    page.wait_for_url(version_url(ACTIVE))
    expect(page.locator("#activate-form h3")).to_have_text(f"Roll back to {ACTIVE}")
    activate_from_the_page(page, f"{COLLECTIONS}@{ACTIVE}", "7.4 refuses releases it should allow.")
    page.wait_for_url(version_url(ACTIVE))
    expect(page.locator(".messages")).to_contain_text(f"{COLLECTIONS}@{ACTIVE} is active")
    expect(page.locator("#contract-status")).to_have_attribute("data-status", "active")
    expect(panel).to_have_attribute("data-status", "activated")
    expect(panel).to_contain_text(DRAFT)  # what the rollback replaced
    expect(page.locator("#adr")).to_contain_text(f"replacing `{DRAFT}`")
    page.screenshot(path=str(SCREENSHOTS / "console-contract-rolled-back.png"), full_page=True)

    statuses = dict(
        Contract.objects.filter(decision_class=COLLECTIONS).values_list("version", "status")
    )
    assert statuses == {ACTIVE: "active", DRAFT: "retired"}
    assert AuditEvent.objects.filter(
        action="contract.rollback", object_ref=f"{COLLECTIONS}@{ACTIVE}"
    ).exists()
    assert_clean(traffic)
