"""Escalations by subject: a reviewer finds every question asked about one account (the queue
names each decision's subject and filters by it, as the API does), so a release approved on
one escalation is not decided blind to a second one open on the same account."""

from __future__ import annotations

import re
from typing import Any

import pytest

from reconcile_app.models import Escalation
from sandbox_app.services import sandbox_record_write
from tests.conftest import COLLECTIONS, ago
from tests.reconcile_app.effects.conftest import case_ledger_says_collect


def complaint_open(subject: str) -> None:
    """Collectible with an open complaint: the collections contract escalates."""
    sandbox_record_write(
        source="case-service",
        subject=subject,
        field="collections_status",
        value="collect",
        valid_from=ago(minutes=20),
    )
    sandbox_record_write(
        source="complaints-service",
        subject=subject,
        field="complaint_status",
        value="open",
        valid_from=ago(minutes=5),
    )
    case_ledger_says_collect(ago(minutes=20), subject)


def escalated(
    agent: Any, subject: str, action: str = "release_collections_hold", **extra: Any
) -> str:
    response = agent.post(
        "/api/v1/reconcile",
        {
            "subject": subject,
            "purpose": "collections",
            "decision_class": COLLECTIONS,
            "proposed_action": action,
            **extra,
        },
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["decision"]["result"] == "escalate", body["decision"]
    return str(body["escalation_id"])


@pytest.fixture
def two_accounts(estate, agent) -> dict[str, list[str]]:
    """account-41 with two questions open (release, retain), account-42 with one."""
    complaint_open("account-41")
    complaint_open("account-42")
    return {
        "account-41": [
            escalated(agent, "account-41"),
            escalated(agent, "account-41", "retain_manual_review"),
        ],
        "account-42": [escalated(agent, "account-42")],
    }


def row_ids(page: str) -> list[str]:
    return re.findall(r'<tr id="escalation-(esc_[0-9a-f]+)"', page)


def test_the_api_filters_escalations_by_subject(two_accounts, reviewer, agent):
    for persona in (reviewer, agent):
        response = persona.get("/api/v1/escalations", subject="account-41")
        assert response.status_code == 200
        found = {item["escalation_id"] for item in response.json()["results"]}
        assert found == set(two_accounts["account-41"])
    # Exact, as the API's other filters are.
    assert reviewer.get("/api/v1/escalations", subject="account-4").json()["results"] == []


def test_the_queue_names_each_decisions_subject_and_filters_by_it(two_accounts, reviewer_browser):
    page = reviewer_browser.get("/escalations/").content.decode()
    for subject, ids in two_accounts.items():
        for escalation_id in ids:
            [row] = re.findall(rf'<tr id="escalation-{escalation_id}".*?</tr>', page, re.S)
            assert f">{subject}</a>" in row, row
            assert f'href="/escalations/?status=all&amp;subject={subject}"' in row
    narrowed = reviewer_browser.get("/escalations/?subject=account-41").content.decode()
    assert set(row_ids(narrowed)) == set(two_accounts["account-41"])
    assert 'name="subject"' in narrowed
    # The console's text filters match part of the value, in any case.
    assert set(
        row_ids(reviewer_browser.get("/escalations/?subject=ACCOUNT-4").content.decode())
    ) == {
        *two_accounts["account-41"],
        *two_accounts["account-42"],
    }
    assert Escalation.objects.count() == 3


def test_naming_the_subjects_adds_no_query_per_row(two_accounts, agent, reviewer_browser):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def count() -> int:
        reviewer_browser.get("/escalations/")  # warm the session
        with CaptureQueriesContext(connection) as queries:
            assert reviewer_browser.get("/escalations/?status=all").status_code == 200
        return len(queries)

    few = count()
    for index in range(4):
        complaint_open(f"account-5{index}")
        escalated(agent, f"account-5{index}")
    assert count() == few


def test_an_escalation_page_lists_the_other_questions_about_its_subject(
    two_accounts, reviewer_browser
):
    """Approving account-41's release, the reviewer sees that its retain_manual_review is
    open too (and nothing of account-42's); a decided one is listed with its outcome."""
    release, retain = two_accounts["account-41"]
    reviewer_browser.post(f"/escalations/{retain}/reject/", {"rationale": "not needed"})
    page = reviewer_browser.get(f"/escalations/{release}/").content.decode()
    [panel] = re.findall(r'<section class="panel"[^>]*id="same-subject".*?</section>', page, re.S)
    assert f'href="/escalations/{retain}/"' in panel and "retain_manual_review" in panel
    assert '<span class="badge badge-red">rejected</span>' in panel
    assert f'href="/escalations/{release}/"' not in panel
    assert two_accounts["account-42"][0] not in panel
    assert 'href="/escalations/?status=all&amp;subject=account-41"' in panel

    alone = reviewer_browser.get(f"/escalations/{two_accounts['account-42'][0]}/").content
    assert "No other escalation about account-42" in alone.decode()


def test_the_other_questions_cost_one_query_however_many(two_accounts, agent, reviewer_browser):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    release = two_accounts["account-41"][0]

    def count() -> int:
        reviewer_browser.get(f"/escalations/{release}/")  # warm the session
        with CaptureQueriesContext(connection) as queries:
            assert reviewer_browser.get(f"/escalations/{release}/").status_code == 200
        return len(queries)

    few = count()
    escalated(agent, "account-41", proposed_value="collect")
    escalated(agent, "account-41", "retain_manual_review", proposed_value="manual_review")
    assert count() == few


def test_the_api_list_costs_the_same_however_many_rows(two_accounts, agent, reviewer):
    """GET /api/v1/escalations reads what each row names (snapshot, effect, memory, who
    raised and who decided it) in the page's one query, for people and agents alike."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def count(persona: Any) -> int:
        persona.get("/api/v1/escalations")  # warm the key's cache
        with CaptureQueriesContext(connection) as queries:
            assert persona.get("/api/v1/escalations").status_code == 200
        return len(queries)

    few = {persona.name: count(persona) for persona in (reviewer, agent)}
    reviewer.post(
        f"/api/v1/escalations/{two_accounts['account-42'][0]}/reject", {"rationale": "no"}
    )
    for index in range(4):
        complaint_open(f"account-6{index}")
        escalated(agent, f"account-6{index}")
    assert {persona.name: count(persona) for persona in (reviewer, agent)} == few


def test_the_api_list_reads_no_snapshots_content(two_accounts, reviewer, agent):
    """A row names its snapshot by id: the snapshot's content (every read, claim and piece of
    evidence, kilobytes each) was read and decoded for every row and never shown."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for persona in (reviewer, agent):
        with CaptureQueriesContext(connection) as queries:
            listed = persona.get("/api/v1/escalations")
            one = persona.get(f"/api/v1/escalations/{two_accounts['account-41'][0]}")
        assert listed.status_code == one.status_code == 200
        assert listed.json()["results"][0]["snapshot_id"]
        read = [q["sql"] for q in queries if 'FROM "reconcile_app_escalation"' in q["sql"]]
        assert read and not any('"reconcile_app_decisionsnapshot"."content"' in sql for sql in read)
