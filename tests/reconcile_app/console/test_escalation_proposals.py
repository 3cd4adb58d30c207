"""A snapshot escalation is decidable from its page alone (issue 13): the proposal beside the
owners' answers, the agent's claims, the contradictions with both values and their sources,
the reasons, and what Approve and Reject do; after approval, what it authorised."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from reconcile_app.models import Escalation
from reconcile_app.services.evidence import evidence_append
from sandbox_app.services import sandbox_record_write
from tests.conftest import COLLECTIONS
from tests.reconcile_app.effects.conftest import case_ledger_says_collect

SUBJECT = "account-31"


def reconcile(agent, claims: list | None = None) -> dict:
    response = agent.post(
        "/api/v1/reconcile",
        {
            "subject": SUBJECT,
            "purpose": "collections",
            "decision_class": COLLECTIONS,
            "proposed_action": "retain_manual_review",
            "proposed_value": "manual_review",
            "claims": claims or [],
        },
    )
    assert response.status_code == 201, response.content
    return response.json()


@pytest.fixture
def contradicted(estate):
    """The case service says collect; the hardship desk observed hold later: a contradiction
    that the collections contract escalates."""
    now = timezone.now()
    sandbox_record_write(
        source="case-service",
        subject=SUBJECT,
        field="collections_status",
        value="collect",
        version=42,
        valid_from=now - timedelta(minutes=20),
    )
    case_ledger_says_collect(now - timedelta(minutes=20), SUBJECT)
    evidence_append(
        kind="observation",
        subject=SUBJECT,
        field="collections_status",
        value="hold",
        source="hardship-desk",
        observed_at=now - timedelta(minutes=5),
        evidence_id="ev-desk-31",
    )


def claim(value: str) -> dict:
    return {
        "subject": SUBJECT,
        "field": "collections_status",
        "value": value,
        "written_at": (timezone.now() - timedelta(minutes=2)).isoformat(),
        "memory_class": "episodic",
        "note": "Remembered from last week's call.",
    }


def page_of(browser, escalation_id: str) -> str:
    response = browser.get(f"/escalations/{escalation_id}/")
    assert response.status_code == 200
    return response.content.decode()


def test_the_page_shows_the_proposal_and_both_sides(contradicted, agent, reviewer_browser):
    body = reconcile(agent, [claim("collect")])
    assert body["decision"]["result"] == "escalate"
    page = page_of(reviewer_browser, body["escalation_id"])

    # Who asks what, on which subject and field, writing which value.
    assert "collections-agent</strong> asks to" in page
    assert f'<strong class="mono">{SUBJECT}</strong>' in page
    assert "retain_manual_review" in page and "collections_status" in page
    assert '<span class="value mono">manual_review</span>' in page
    # Both conflicting values with their sources.
    assert 'id="proposal-contradictions"' in page
    assert "case-service" in page and "hardship-desk" in page and "ev-desk-31" in page
    [row] = re.findall(
        r'<table class="data-table" id="proposal-contradictions">.*?</table>', page, re.S
    )
    assert re.search(
        r'<span class="value">collect</span><span class="side-source">case-service', row
    )
    assert re.search(r'<span class="value">hold</span><span class="side-source">hardship-desk', row)
    # The reasons, the reads and the remembered claims.
    assert '<span class="tag mono">contradiction</span>' in page
    assert 'id="proposal-reads"' in page and "version 42" in page
    assert "Remembered from last week&#x27;s call." in page
    # What the buttons do; no talk of keys where there is no key.
    assert 'id="approve-does"' in page and "within 120 s of your approval" in page
    assert "escalation_rejected" in page
    assert "writes to the key" not in page
    assert "waits for review" in page


def test_approval_is_shown_as_what_it_authorised(contradicted, agent, reviewer_browser):
    body = reconcile(agent)
    response = reviewer_browser.post(
        f"/escalations/{body['escalation_id']}/approve/", {"rationale": "Desk note was a typo."}
    )
    assert response.status_code == 302
    page = page_of(reviewer_browser, body["escalation_id"])
    assert "authorised" in page and 'id="commit-state"' in page
    assert "retain_manual_review authorised until" in page

    committed = agent.post(
        "/api/v1/effects",
        {
            "snapshot_id": body["snapshot_id"],
            "action": "retain_manual_review",
            "resulting_value": "manual_review",
        },
        HTTP_IDEMPOTENCY_KEY="k-console-approved",
        HTTP_IF_MATCH='"42"',
    )
    assert committed.status_code == 201, committed.content
    page = page_of(reviewer_browser, body["escalation_id"])
    assert 'href="/effects/k-console-approved/"' in page

    effect_page = reviewer_browser.get("/effects/k-console-approved/").content.decode()
    assert 'id="approved-by"' in effect_page and "rhys-reviewer" in effect_page
    assert f'href="/escalations/{body["escalation_id"]}/"' in effect_page


def test_after_the_window_the_page_says_it_closed(contradicted, agent, reviewer_browser):
    body = reconcile(agent)
    reviewer_browser.post(f"/escalations/{body['escalation_id']}/approve/", {"rationale": "ok"})
    Escalation.objects.filter(escalation_id=body["escalation_id"]).update(
        decided_at=timezone.now() - timedelta(minutes=5)
    )
    page = page_of(reviewer_browser, body["escalation_id"])
    assert "window closed" in page and "must reconcile again" in page


def test_rejection_is_shown_as_refused(contradicted, agent, reviewer_browser):
    body = reconcile(agent)
    reviewer_browser.post(f"/escalations/{body['escalation_id']}/reject/", {"rationale": "no"})
    page = page_of(reviewer_browser, body["escalation_id"])
    assert 'refused (<span class="mono">escalation_rejected</span>)' in page


def test_retries_are_listed_once_on_one_escalation(contradicted, agent, reviewer_browser):
    first = reconcile(agent)
    retries = [reconcile(agent) for _ in range(3)]
    assert {retry["escalation_id"] for retry in retries} == {first["escalation_id"]}
    page = page_of(reviewer_browser, first["escalation_id"])
    assert 'Retries that joined <span class="count">3</span>' in page
    for retry in retries:
        assert f'href="/snapshots/{retry["snapshot_id"]}/"' in page
    queue = reviewer_browser.get("/escalations/").content.decode()
    assert queue.count('<tr id="escalation-') == 1


def test_detail_query_count_does_not_grow_with_retries_or_claims(
    contradicted, agent, reviewer_browser
):
    first = reconcile(agent, [claim("collect")])

    def count() -> int:
        reviewer_browser.get(f"/escalations/{first['escalation_id']}/")  # warm the session
        with CaptureQueriesContext(connection) as queries:
            assert reviewer_browser.get(f"/escalations/{first['escalation_id']}/").status_code == (
                200
            )
        return len(queries)

    few = count()
    for _ in range(4):
        reconcile(agent, [claim("collect"), claim("hold"), claim("collect")])
    assert count() == few


def test_a_snapshot_whose_evidence_was_withdrawn_is_not_offered_as_authorising(
    contradicted, agent, operator, reviewer_browser
):
    """The Approve box said the snapshot would commit within the window of the approval,
    while its evidence had been corrected: every commit on it is 409 snapshot_tainted,
    whatever the reviewer decides. The page says so, and why."""
    from reconcile_app.services.corrections import correction_create

    body = reconcile(agent)
    [used] = body["fields"]["collections_status"]["evidence"]
    correction_create(evidence_id=used, reason="misattributed", actor=operator.user)

    page = page_of(reviewer_browser, body["escalation_id"])
    assert 'id="cannot-authorise"' in page and "snapshot_tainted" in page
    assert "Approving authorises nothing" in page
    assert 'id="approve-does"' not in page

    # A retry that joined on evidence that still stands may still commit on an approval.
    case_ledger_says_collect(
        timezone.now() - timedelta(minutes=10), SUBJECT
    )  # the desk's stays later
    assert reconcile(agent)["escalation_id"] == body["escalation_id"]
    page = page_of(reviewer_browser, body["escalation_id"])
    assert "Approving authorises only a retry that joined it" in page


def test_remembered_claims_say_when_written_as_every_other_time_does(
    contradicted, agent, reviewer_browser
):
    """The claim's written_at is a time element like the page's others (UTC to the second,
    following the "show times as" choice), not the raw text the agent sent."""
    body = reconcile(agent, [claim("collect")])
    page = page_of(reviewer_browser, body["escalation_id"])
    [table] = re.findall(r'<table class="data-table" id="proposal-claims">.*?</table>', page, re.S)
    assert re.search(r'<time datetime="[0-9T:.-]+Z" title="[0-9T:.-]+Z">[0-9: -]+</time>', table)
    assert "+00:00" not in table


def commit_badge(page: str) -> str:
    [badge] = re.findall(r'id="commit-badge">.*?</div>', page, re.S)
    return badge


@pytest.mark.parametrize("withdrawn_by", ["quarantine", "correction"])
def test_an_approval_whose_snapshot_can_no_longer_commit_is_not_shown_as_authorised(
    contradicted, agent, operator, reviewer_browser, withdrawn_by
):
    """Approved, then the source it read quarantined (or its evidence corrected): every
    commit on it is refused (423 source_quarantined, 409 snapshot_tainted), while the page's
    Commit badge and row still said "authorised until …" — the agent and the console
    disagreed about what the approval allows."""
    from reconcile_app.services.corrections import correction_create
    from reconcile_app.services.quarantine import quarantine_create

    body = reconcile(agent)
    reviewer_browser.post(f"/escalations/{body['escalation_id']}/approve/", {"rationale": "ok"})
    assert "authorised" in commit_badge(page_of(reviewer_browser, body["escalation_id"]))
    if withdrawn_by == "quarantine":
        quarantine_create(
            scope="source", target="case-service", reason="bad data", actor=operator.user
        )
        code = "source_quarantined"
    else:
        [used] = body["fields"]["collections_status"]["evidence"]
        correction_create(evidence_id=used, reason="misattributed", actor=operator.user)
        code = "snapshot_tainted"

    page = page_of(reviewer_browser, body["escalation_id"])
    assert "authorised" not in commit_badge(page)
    assert "cannot commit" in commit_badge(page)
    [state] = re.findall(r'id="commit-state">.*?</dd>', page, re.S)
    assert "authorised until" not in state
    assert code in state and "can no longer commit" in state


def test_the_page_says_how_old_each_read_is_and_what_a_commit_checks_again(
    contradicted, agent, reviewer_browser, monkeypatch
):
    """Live: an escalation opened at 10:20:54, approved at 10:31:24 after complaint_status
    had moved at its owner; the commit on it was accepted on reads 10 minutes old, past both
    freshness limits (300 s, 600 s), and only collections_status's version was checked. The
    page showed the reads' observed times alone: nothing said how old they were now, that
    they were past their limits, or which of them a commit does not read again."""
    from types import SimpleNamespace

    from reconcile_app.selectors import escalation_proposals

    body = reconcile(agent)
    fresh = page_of(reviewer_browser, body["escalation_id"])
    [hint] = re.findall(r'<p class="hint" id="reads-checked-again">.*?</p>', fresh, re.S)
    assert 'checks <span class="mono">collections_status</span>\'s version again' in hint
    assert '<span class="mono">complaint_status</span> is not read again' in hint
    assert 'id="reads-older-than-limit"' not in fresh and "older than its limit" not in fresh

    later = timezone.now() + timedelta(minutes=7)
    monkeypatch.setattr(escalation_proposals, "timezone", SimpleNamespace(now=lambda: later))
    stale = page_of(reviewer_browser, body["escalation_id"])
    [reads] = re.findall(
        r'<table class="data-table wrap-times" id="proposal-reads">.*?</table>', stale, re.S
    )
    assert reads.count("older than its limit") == 1  # collections_status: 300 s; complaint: 600 s
    assert re.search(r"7m 0\ds <span class=\"tag tag-strong\">older than its limit", reads)
    assert "1 read is now older than its freshness limit" in stale
