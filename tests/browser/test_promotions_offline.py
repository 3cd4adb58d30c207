"""Promotion in a real browser, offline: a reviewer opens the queue, reads a suggested
procedure beside what it would supersede, promotes it with a rationale; their own
suggestion shows why it is not theirs to decide. Then the memory classes page.

Same closed network as test_console_offline: Debian's Chromium, Django's live server, every
request to another host aborted and reported.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.browser.test_console_offline import (
    CHROMIUM,
    PASSWORD,
    SCREENSHOTS,
    browser_page,  # noqa: F401 (a fixture)
)
from tests.browser.test_console_triage import assert_clean, sign_in

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium"
    ),
]


@pytest.fixture
def promotion_data(transactional_db: Any, agent: Any) -> dict[str, Any]:
    from django.contrib.auth.models import Group

    from reconcile_app.services.escalations import escalation_decide
    from reconcile_app.services.evidence import evidence_append
    from reconcile_app.services.memory import memory_admit
    from tests.conftest import ago, make_person

    reviewer = make_person("rhys-reviewer", "reviewer", password=PASSWORD)
    reviewer.user.groups.add(Group.objects.get_or_create(name="operator")[0])
    other = make_person("rosa-reviewer", "reviewer")
    basis = evidence_append(
        kind="observation",
        subject="collections-playbook",
        field="step",
        value="re-read before retrying",
        source="case-ledger",
        observed_at=ago(days=1),
        evidence_id="ev-playbook",
    )

    def suggest(principal: Any, value: str, **extra: Any) -> Any:
        return memory_admit(
            agent=principal,
            memory_class="runbooks",
            subject="account-17",
            purpose="collections",
            field="collections_status",
            value=value,
            derived_from=[basis.evidence_id],
            **extra,
        )

    current = suggest(agent.principal, "after a 412, retry at once")
    escalation_decide(
        escalation_id=current.promotions.get().escalation_id,
        reviewer=other.user,
        approve=True,
        rationale="the old procedure",
    )
    return {
        "reviewer": reviewer,
        "current": current,
        "theirs": suggest(
            agent.principal,
            "after a 412, read again, then retry once",
            supersedes=current.memory_id,
        ),
        "own": suggest(reviewer.principal, "never retry a 412"),
    }


def test_reviewer_promotes_a_suggestion_but_not_their_own(
    live_server, browser_page, promotion_data
):
    from reconcile_app.models import MemoryRecord

    page, traffic = browser_page
    base = live_server.url
    theirs, own, current = (promotion_data[name] for name in ("theirs", "own", "current"))
    sign_in(page, base, promotion_data["reviewer"].user.username, "/promotions/")

    page.wait_for_selector("#promotions tbody tr")
    assert page.locator("#promotions tbody tr").count() == 2
    own_row = page.locator(f"#promotion-{own.promotions.get().escalation_id}")
    assert "You wrote it" in own_row.inner_text()
    page.screenshot(path=str(SCREENSHOTS / "console-promotions.png"), full_page=True)

    # Their suggestion: what it says, what it derives from, what it would supersede.
    row = page.locator(f"#promotion-{theirs.promotions.get().escalation_id}")
    assert current.memory_id in row.inner_text()
    row.locator("a:has-text('Review')").click()
    page.wait_for_url(re.compile(rf"/memories/{re.escape(theirs.memory_id)}/#promotion$"))
    assert "never in force" in page.locator("#suggestion-banner").inner_text()
    page.screenshot(path=str(SCREENSHOTS / "console-memory-suggested.png"), full_page=True)
    page.fill("#approve-rationale", "Matches the owner's runbook since the September change.")
    page.click("#approve-form button[type=submit]")
    page.wait_for_url(re.compile(rf"/memories/{re.escape(theirs.memory_id)}/$"))
    assert "promoted: it is active" in page.locator(".messages").inner_text()
    assert page.locator("#approve-form").count() == 0
    history = page.locator("#status-history tbody tr")
    assert history.count() == 2
    page.screenshot(path=str(SCREENSHOTS / "console-memory-promoted.png"), full_page=True)
    assert MemoryRecord.objects.get(pk=theirs.pk).status == "active"
    assert MemoryRecord.objects.get(pk=current.pk).status == "superseded"

    # Their own: readable, with the reason instead of the forms.
    page.goto(f"{base}/memories/{own.memory_id}/")
    assert "another reviewer must decide" in page.locator("#self-written").inner_text()
    assert page.locator("#approve-form").count() == 0
    assert MemoryRecord.objects.get(pk=own.pk).status == "suggested"

    page.goto(f"{base}/memory-classes/")
    page.wait_for_selector("#memory-classes tbody tr")
    assert page.locator("#memory-classes tbody tr").count() == 6
    page.screenshot(path=str(SCREENSHOTS / "console-memory-classes.png"), full_page=True)

    assert_clean(traffic)
