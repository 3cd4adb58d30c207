"""Compensation in a real browser, offline: an operator undoes a wrongly applied release from
the effect's page; a refused attempt is shown beside the form and a reload posts nothing;
the accepted one is committed through the gate in the operator's name and the two effects
link to each other.

Same closed network as test_console_offline: Debian's Chromium, Django's live server, every
request to another host aborted and reported. Celery runs eagerly (the readback the commit
queues runs in the request), as in test_console_triage.
"""

from __future__ import annotations

import re
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

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium"
    ),
]
SUBJECT = "account-wrong-1"
REASON = "released in error: the customer agreed to manual review"


def owner_says(value: str) -> None:
    from django.utils import timezone

    from reconcile_app.services.evidence import evidence_append

    evidence_append(
        kind="observation",
        subject=SUBJECT,
        field="collections_status",
        value=value,
        source="case-ledger",
        observed_at=timezone.now(),
    )


@pytest.fixture
def wrongly_applied(
    transactional_db: Any, estate: Any, agent: Any, eager_celery: Any
) -> dict[str, Any]:
    """The agent released an account it should not have; the release was read back."""
    from tests.conftest import make_person
    from tests.reconcile_app.console.conftest import commit_effect

    operator = make_person("olivia-operator", "operator", password=PASSWORD)
    effect = commit_effect(agent, "wrong-1")
    effect.refresh_from_db()
    assert effect.status == "verified"
    owner_says("released")
    return {"operator": operator, "effect": effect}


def owner_record() -> tuple[Any, int]:
    from sandbox_app.models import SandboxRecord

    record = SandboxRecord.objects.get(
        source="case-service", subject=SUBJECT, field="collections_status"
    )
    return record.value, record.version


def test_operator_compensates_a_wrongly_applied_effect(live_server, browser_page, wrongly_applied):
    from reconcile_app.models import AuditEvent, Effect
    from sandbox_app.services import sandbox_record_write

    page, traffic = browser_page
    base = live_server.url
    operator = wrongly_applied["operator"]
    sign_in(page, base, operator.user.username, "/effects/wrong-1/")
    expect(page.locator("#compensate-form")).to_be_visible()

    # First attempt: the owner's record went on hold meanwhile, so the policy refuses.
    sandbox_record_write(
        source="case-service", subject=SUBJECT, field="collections_status", value="hold"
    )
    owner_says("hold")
    page.select_option("#compensate-action", "retain_manual_review")
    page.fill("#compensate-value", "manual_review")
    page.fill("#compensate-reason", REASON)
    page.click("#compensate-submit")
    page.wait_for_url(re.compile(r"/effects/wrong-1/$"))
    expect(page.locator("#compensate-error")).to_contain_text("decision_not_allowed")
    # What was typed is still there; a reload is a GET and posts nothing again.
    expect(page.locator("#compensate-reason")).to_have_value(REASON)
    page.screenshot(path=str(SCREENSHOTS / "console-compensation-refused.png"), full_page=True)
    page.reload()
    expect(page.locator("#compensate-error")).to_have_count(0)
    assert not Effect.objects.filter(compensates=wrongly_applied["effect"]).exists()

    # The hold is lifted: the compensation goes through the gate.
    sandbox_record_write(
        source="case-service", subject=SUBJECT, field="collections_status", value="released"
    )
    owner_says("released")
    _, version_before = owner_record()
    page.select_option("#compensate-action", "retain_manual_review")
    page.fill("#compensate-value", "manual_review")
    page.fill("#compensate-reason", REASON)
    page.click("#compensate-submit")
    page.wait_for_url(re.compile(r"/effects/compensate-[0-9a-f]+/$"))
    compensation = Effect.objects.get(compensates=wrongly_applied["effect"])
    assert page.url.endswith(f"/effects/{compensation.idempotency_key}/")
    # Reconciled and committed in the operator's name, applied once, read back.
    assert compensation.principal == operator.principal
    assert compensation.snapshot.principal == operator.principal
    assert owner_record() == ("manual_review", version_before + 1)
    expect(page.locator("#effect-status")).to_have_attribute("data-status", "verified")
    page.screenshot(path=str(SCREENSHOTS / "console-compensation.png"), full_page=True)

    # The two effects link to each other, both ways.
    page.click("#compensates a")
    page.wait_for_url(re.compile(r"/effects/wrong-1/$"))
    expect(page.locator("#compensated-by a")).to_have_text(compensation.idempotency_key)
    expect(page.locator("#compensate-form")).to_have_count(0)
    expect(page.locator(".audit-timeline")).to_contain_text(REASON)
    page.click("#compensated-by a")
    page.wait_for_url(re.compile(rf"/effects/{compensation.idempotency_key}/$"))

    audited = AuditEvent.objects.filter(action="effect.compensate")
    assert {row.object_ref for row in audited} == {"wrong-1", compensation.idempotency_key}
    assert {row.reason for row in audited} == {REASON}
    assert_clean(traffic)
