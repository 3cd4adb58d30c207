"""A reviewer's approval authorises, in a real browser (issue 13): the reviewer opens a
snapshot escalation, reads the proposal beside the owners' answers and the contradiction,
approves with a rationale; the agent's commit then succeeds, and the effect page names the
reviewer who approved it. Offline, like the other browser tests."""

from __future__ import annotations

import re
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
from tests.browser.test_console_triage import assert_clean, sign_in

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium"
    ),
]

SUBJECT = "account-77"


@pytest.fixture
def escalated(transactional_db: Any, estate: Any, agent: Any) -> dict[str, Any]:
    from django.utils import timezone

    from reconcile_app.services.evidence import evidence_append
    from sandbox_app.services import sandbox_record_write
    from tests.conftest import COLLECTIONS, make_person

    now = timezone.now()
    sandbox_record_write(
        source="case-service",
        subject=SUBJECT,
        field="collections_status",
        value="collect",
        version=42,
        valid_from=now - timedelta(minutes=20),
    )
    for value, source, minutes in (("collect", "case-ledger", 20), ("hold", "hardship-desk", 5)):
        evidence_append(
            kind="observation",
            subject=SUBJECT,
            field="collections_status",
            value=value,
            source=source,
            observed_at=now - timedelta(minutes=minutes),
        )
    reviewer = make_person("rhys-reviewer", "reviewer", password=PASSWORD)
    request = {
        "subject": SUBJECT,
        "purpose": "collections",
        "decision_class": COLLECTIONS,
        "proposed_action": "retain_manual_review",
        "proposed_value": "manual_review",
    }
    body = agent.post("/api/v1/reconcile", request).json()
    assert body["decision"]["result"] == "escalate"
    # The agent retries while it waits: the retries join the same escalation.
    for _ in range(2):
        assert (
            agent.post("/api/v1/reconcile", request).json()["escalation_id"]
            == (body["escalation_id"])
        )
    return {"reviewer": reviewer, "snapshot": body}


def commit(agent: Any, snapshot: dict[str, Any], key: str) -> Any:
    return agent.post(
        "/api/v1/effects",
        {
            "snapshot_id": snapshot["snapshot_id"],
            "action": "retain_manual_review",
            "resulting_value": "manual_review",
        },
        HTTP_IDEMPOTENCY_KEY=key,
        HTTP_IF_MATCH='"42"',
    )


def test_reviewer_approves_and_the_agent_acts(live_server, browser_page, escalated, agent):
    from reconcile_app.models import Effect

    page, traffic = browser_page
    base = live_server.url
    snapshot = escalated["snapshot"]
    escalation_id = snapshot["escalation_id"]

    # Before the decision the agent is told to wait.
    pending = commit(agent, snapshot, "journey-early")
    assert (pending.status_code, pending.json()["code"]) == (403, "escalation_pending")

    sign_in(page, base, escalated["reviewer"].user.username, "/escalations/")
    expect(page.locator("#escalations tbody tr")).to_have_count(1)
    page.click(f"#escalations a:has-text('{escalation_id}')")
    page.wait_for_url(re.compile(rf"/escalations/{escalation_id}/$"))

    # Everything needed to decide, on this page.
    expect(page.locator("#proposal-lede")).to_contain_text("asks to retain_manual_review")
    expect(page.locator("#proposal-lede")).to_contain_text(SUBJECT)
    expect(page.locator("#proposal-contradictions tbody tr")).to_have_count(1)
    expect(page.locator("#proposal-contradictions")).to_contain_text("hardship-desk")
    expect(page.locator("#proposal-reads")).to_contain_text("case-service")
    expect(page.locator("#proposal-retries li")).to_have_count(2)
    expect(page.locator("#approve-does")).to_contain_text("within 120 s of your approval")
    expect(page.locator("#commit-badge")).to_contain_text("waits for review")
    page.screenshot(path=str(SCREENSHOTS / "console-escalation-proposal.png"), full_page=True)

    page.fill("#approve-rationale", "The desk note predates the payment plan; keep review.")
    page.click("#approve-form button[type=submit]")
    page.wait_for_url(re.compile(rf"/escalations/{escalation_id}/$"))
    expect(page.locator("#commit-badge")).to_contain_text("authorised")
    expect(page.locator("#commit-state")).to_contain_text("retain_manual_review authorised until")

    # The agent learns the outcome from the escalation, and its commit now succeeds.
    assert agent.get(f"/api/v1/escalations/{escalation_id}").json()["status"] == "approved"
    committed = commit(agent, snapshot, "journey-approved")
    assert committed.status_code == 201, committed.content
    assert committed.json()["approved_by"] == "rhys-reviewer"

    page.reload()
    page.click("#proposal-effects a:has-text('journey-approved')")
    page.wait_for_url(re.compile(r"/effects/journey-approved/$"))
    expect(page.locator("#approved-by")).to_contain_text("rhys-reviewer")
    expect(page.locator("#approved-by")).to_contain_text(escalation_id)
    page.screenshot(path=str(SCREENSHOTS / "console-effect-approved.png"), full_page=True)

    effect = Effect.objects.get(idempotency_key="journey-approved")
    assert (effect.approved_by, effect.escalation.escalation_id) == ("rhys-reviewer", escalation_id)
    assert_clean(traffic)
