"""Triage in a real browser, offline: an operator settles an unknown outcome, and a reviewer
decides an escalation (and is not offered their own).

Same closed network as test_console_offline: Debian's Chromium, Django's live server, every
request to another host aborted and reported. The live server runs in this process, so the
Celery app is switched to eager mode here: "Run readback now" runs its task inside the
request instead of on a worker (restored afterwards).
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
    Traffic,
    browser_page,  # noqa: F401 (a fixture)
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium"
    ),
]


@pytest.fixture
def eager_celery() -> Iterator[Any]:
    from config.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        yield app
    finally:
        app.conf.task_always_eager = previous


@contextmanager
def tasks_lost() -> Iterator[None]:
    """The broker drops what is enqueued meanwhile (as after a crash): the work waits in the
    database for the sweep, or for an operator."""
    from reconcile_app import tasks

    originals = {
        task: task.delay for task in (tasks.effect_resolve_task, tasks.effect_readback_task)
    }
    for task in originals:
        task.delay = lambda *args, **kwargs: None
    try:
        yield
    finally:
        for task, delay in originals.items():
            task.delay = delay


def sign_in(page: Any, base: str, username: str, path: str) -> None:
    page.goto(f"{base}{path}")
    assert "/accounts/login/" in page.url
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(re.escape(path) + "$"))


def assert_clean(traffic: Traffic) -> None:
    assert traffic.external == [], f"tried to leave the closed network: {traffic.external}"
    failed = {path: status for path, status in traffic.statuses.items() if status >= 400}
    assert not failed, failed


@pytest.fixture
def triage_data(
    transactional_db: Any, estate: Any, agent: Any, eager_celery: Any
) -> dict[str, Any]:
    from reconcile_app.models import Effect
    from tests.conftest import make_person
    from tests.reconcile_app.console.conftest import commit_effect

    operator = make_person("olivia-operator", "operator", password=PASSWORD)
    with tasks_lost():
        # The answer was lost after the owner committed, and so was the resolution task.
        unknown = commit_effect(agent, "u-browser", fault="timeout_after_commit")
        # A receipt came back; its readback task was lost before it ran.
        accepted = commit_effect(agent, "a-browser")
        commit_effect(agent, "r-browser", changed_meanwhile=True)
    assert (unknown.status, accepted.status) == ("unknown", "accepted")
    assert Effect.objects.count() == 3
    return {"operator": operator, "unknown": unknown, "accepted": accepted}


def test_operator_triages_an_unknown_outcome(live_server, browser_page, triage_data):
    from reconcile_app.models import AuditEvent, Effect
    from tests.reconcile_app.console.conftest import read_back

    page, traffic = browser_page
    base = live_server.url
    sign_in(page, base, triage_data["operator"].user.username, "/effects/")

    # The queue opens on unknown outcomes.
    page.wait_for_selector("#effects tbody tr")
    assert page.locator("#effects tbody tr").count() == 1
    assert page.locator("#effect-tabs .tab.active").inner_text().startswith("Unknown")
    page.screenshot(path=str(SCREENSHOTS / "console-effects.png"), full_page=True)

    # Tabs swap through htmx and keep the URL honest.
    page.click("#effect-tabs a:has-text('All')")
    page.wait_for_url(re.compile(r"status=all"))
    expect(page.locator("#effects tbody tr")).to_have_count(3)
    page.click("#effect-tabs a:has-text('Unknown')")
    expect(page.locator("#effects tbody tr")).to_have_count(1)

    page.click("#effects a:has-text('u-browser')")
    page.wait_for_url(re.compile(r"/effects/u-browser/$"))
    assert page.locator("#effect-status").get_attribute("data-status") == "unknown"
    assert page.locator("#timeline tbody tr").count() == 3
    page.screenshot(path=str(SCREENSHOTS / "console-effect-unknown.png"), full_page=True)

    # Run readback now: the status panel and the timeline change in place, no reload.
    page.evaluate("window.__notReloaded = true")
    page.click("#run-readback")
    page.wait_for_selector("#effect-status[data-status='verified']")
    assert page.evaluate("window.__notReloaded") is True
    assert page.locator("#effect-status").get_attribute("data-polling") == "false"
    expect(page.locator("#timeline tbody tr")).to_have_count(6)
    assert page.url.endswith("/effects/u-browser/")
    assert Effect.objects.get(idempotency_key="u-browser").status == "verified"
    assert AuditEvent.objects.filter(action="effect.readback", object_ref="u-browser").exists()
    assert "Run readback now" not in page.content()
    page.screenshot(path=str(SCREENSHOTS / "console-effect-verified.png"), full_page=True)

    # An accepted effect whose readback has not landed: the panel polls every 2s, and picks
    # up the worker's result (played here by the test) without a reload.
    page.goto(f"{base}/effects/a-browser/")
    page.wait_for_selector("#effect-status[data-polling='true']")
    page.evaluate("window.__notReloaded = true")
    read_back(triage_data["accepted"])
    page.wait_for_selector("#effect-status[data-status='verified']", timeout=8_000)
    assert page.evaluate("window.__notReloaded") is True
    expect(page.locator("#timeline tbody tr")).to_have_count(4)

    assert_clean(traffic)


@pytest.fixture
def review_data(transactional_db: Any, estate: Any, agent: Any) -> dict[str, Any]:
    from tests.conftest import make_person
    from tests.reconcile_app.console.conftest import OWN_KEY, ambiguous_fact

    reviewer = make_person("rhys-reviewer", "reviewer", password=PASSWORD)
    _registry_evidence()
    theirs = ambiguous_fact(agent, agent)
    own = ambiguous_fact(agent, reviewer, OWN_KEY)
    return {"reviewer": reviewer, "theirs": theirs, "own": own}


def _registry_evidence() -> None:
    """What the `registry` fixture of the facts tests writes (the record the memories cite)."""
    from reconcile_app.services.evidence import evidence_append
    from tests.conftest import ago

    evidence_append(
        kind="observation",
        subject="math-eval",
        field="baseline",
        value="ckpt-0519",
        source="eval-registry",
        observed_at=ago(days=60),
        evidence_id="ev-registry-r18",
    )


def test_reviewer_decides_an_escalation_but_not_their_own(live_server, browser_page, review_data):
    from reconcile_app.models import Escalation, MemoryRecord

    page, traffic = browser_page
    base = live_server.url
    theirs, own = review_data["theirs"], review_data["own"]
    sign_in(page, base, review_data["reviewer"].user.username, "/escalations/")

    page.wait_for_selector("#escalations tbody tr")
    assert page.locator("#escalations tbody tr").count() == 2
    page.screenshot(path=str(SCREENSHOTS / "console-escalations.png"), full_page=True)

    # Their own escalation: readable, with a note instead of the forms.
    page.click(f"#escalations a:has-text('{own.escalation_id}')")
    page.wait_for_url(re.compile(rf"/escalations/{own.escalation_id}/$"))
    assert "another reviewer must decide it" in page.locator("#self-raised").inner_text()
    assert page.locator("#approve-form").count() == 0
    assert page.locator("#reject-form").count() == 0
    page.screenshot(path=str(SCREENSHOTS / "console-escalation-own.png"), full_page=True)

    # The agent's: the candidates side by side, approve with one selected.
    page.goto(f"{base}/escalations/{theirs.escalation_id}/")
    assert page.locator("#candidates .candidate-head").count() == 2
    page.screenshot(path=str(SCREENSHOTS / "console-escalation-open.png"), full_page=True)
    page.check("#approve-form input[name=selected_ref][value='math-eval-v18']")
    page.fill("#approve-rationale", "The registry confirms v18 at r18.")
    page.click("#approve-form button[type=submit]")
    page.wait_for_url(re.compile(rf"/escalations/{theirs.escalation_id}/$"))
    page.wait_for_selector("#decision-summary .badge-green")
    assert f"Escalation {theirs.escalation_id} approved." in page.locator(".messages").inner_text()
    assert "The registry confirms v18 at r18." in page.locator("#decision-summary").inner_text()
    assert page.locator("#approve-form").count() == 0
    page.screenshot(path=str(SCREENSHOTS / "console-escalation-approved.png"), full_page=True)

    assert Escalation.objects.get(pk=theirs.pk).status == "approved"
    assert MemoryRecord.objects.get(memory_id="math-eval-v18b").status == "historical_only"
    assert Escalation.objects.get(pk=own.pk).status == "open"

    # The facts pages show the settled key and the one still frozen.
    page.goto(f"{base}/facts/?on=2026-09-30")
    page.wait_for_selector("#facts tbody tr")
    assert page.locator("#facts tbody tr").count() == 2
    page.screenshot(path=str(SCREENSHOTS / "console-facts.png"), full_page=True)
    page.goto(f"{base}/facts/{own.fact_key}/")
    assert page.locator("#frozen").count() == 1
    assert page.locator("#history tbody tr").count() == 3
    page.screenshot(path=str(SCREENSHOTS / "console-fact-detail.png"), full_page=True)

    assert_clean(traffic)
