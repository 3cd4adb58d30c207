"""The reviewers' promotion queue, and promoting or rejecting a suggestion in the console."""

from __future__ import annotations

import re

import pytest

from reconcile_app.models import AuditEvent, Escalation, MemoryRecord
from reconcile_app.services.corrections import correction_create
from tests.reconcile_app.console.conftest import signed_in
from tests.reconcile_app.console.memory_world import (  # noqa: F401 (fixtures)
    basis,
    decide,
    promotion_of,
    write,
    writer_reviewer,
)

# session, user, the user's groups, the tab counts, the paginator's count, the page of rows
# (memory, what it supersedes, writer, decider and class kind joined), and the classes for
# the filter's suggestions.
LIST_QUERIES = 7
PARTIAL_QUERIES = 6  # the suggestions sit outside the swapped region


def row_ids(page: str) -> list[str]:
    return re.findall(r'<tr id="promotion-(esc_[^"]+)"', page)


def row(page: str, escalation: Escalation) -> str:
    start = page.index(f'<tr id="promotion-{escalation.escalation_id}"')
    return page[start : page.index("</tr>", start)]


def approve(client, record: MemoryRecord, **data: str):
    return client.post(f"/promotions/{promotion_of(record).escalation_id}/approve/", data)


def reject(client, record: MemoryRecord, **data: str):
    return client.post(f"/promotions/{promotion_of(record).escalation_id}/reject/", data)


# --- The queue ----------------------------------------------------------------------------------


def test_the_queue_shows_what_a_reviewer_needs(reviewer_browser, agent, reviewer, basis):
    first = decide(write(agent), reviewer)
    waiting = write(agent, value="read again, then retry once", supersedes=first.memory_id)

    page = reviewer_browser.get("/promotions/").content.decode()

    assert row_ids(page) == [promotion_of(waiting).escalation_id]
    cells = row(page, promotion_of(waiting))
    assert f'href="/memories/{waiting.memory_id}/"' in cells
    assert '<span class="mono">runbooks</span> <span class="tag">procedural</span>' in cells
    assert "collections-agent" in cells  # the writer
    assert "account-17" in cells and "collections_status" in cells
    assert "read again, then retry once" in cells
    assert f'href="/evidence/{basis}/"' in cells  # its derivation
    # What it would supersede, with its value and status.
    assert f'href="/memories/{first.memory_id}/"' in cells
    assert "after a 412, read again before retrying" in cells
    assert '<span class="badge badge-green">active</span>' in cells
    assert "platform-operations" in cells  # routed to the class's owner
    assert f'href="/memories/{waiting.memory_id}/#promotion">Review</a>' in cells


def test_the_writer_sees_why_they_may_not_review(writer_reviewer, basis):
    mine = write(writer_reviewer)
    page = signed_in(writer_reviewer).get("/promotions/").content.decode()
    cells = row(page, promotion_of(mine))
    assert "You wrote it: another reviewer decides." in cells
    assert ">Review</a>" not in cells


@pytest.mark.parametrize("persona", ["operator", "auditor"])
def test_people_who_are_not_reviewers_see_the_queue_without_review_links(
    request, agent, basis, persona
):
    waiting = write(agent)
    page = signed_in(request.getfixturevalue(persona)).get("/promotions/").content.decode()
    assert "Only reviewers promote or reject; you see the queue." in page
    cells = row(page, promotion_of(waiting))
    assert "awaiting a reviewer" in cells and ">Review</a>" not in cells


def test_tabs_count_and_filter_by_class(reviewer_browser, agent, reviewer, basis):
    promoted = decide(write(agent), reviewer)
    rejected = decide(write(agent, value="never retry"), reviewer, approve=False)
    rule = write(agent, "house-rules", value="never contact before 8am")
    procedure = write(agent, value="check complaints first")

    page = reviewer_browser.get("/promotions/").content.decode()
    assert re.search(r'class="tab active">Awaiting review <span class="tab-count">2</span>', page)
    assert 'Promoted <span class="tab-count">1</span>' in page
    assert 'Rejected <span class="tab-count">1</span>' in page
    assert 'All <span class="tab-count">4</span>' in page
    assert set(row_ids(page)) == {
        promotion_of(rule).escalation_id,
        promotion_of(procedure).escalation_id,
    }
    approved = reviewer_browser.get("/promotions/?status=approved").content.decode()
    assert row_ids(approved) == [promotion_of(promoted).escalation_id]
    assert "rhys-reviewer" in row(approved, promotion_of(promoted))  # who decided
    rejected_tab = reviewer_browser.get("/promotions/?status=rejected").content.decode()
    assert row_ids(rejected_tab) == [promotion_of(rejected).escalation_id]

    rules = reviewer_browser.get("/promotions/?memory_class=house-rules").content.decode()
    assert row_ids(rules) == [promotion_of(rule).escalation_id]
    assert 'All <span class="tab-count">1</span>' in rules
    assert '<option value="house-rules">' in page and '<option value="runbooks">' in page


def test_htmx_request_gets_the_region_partial(reviewer_browser, agent, basis):
    write(agent)
    response = reviewer_browser.get("/promotions/?status=all", HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert body.lstrip().startswith('<section id="promotion-region"')
    assert "<html" not in body and 'id="reviewed-classes"' not in body
    assert "HX-Request" in response["Vary"]


@pytest.mark.parametrize("count", [3, 14])
def test_queue_query_count_does_not_grow_with_rows(
    reviewer_browser, agent, reviewer, basis, django_assert_num_queries, count
):
    records = [write(agent, value=f"step {index}") for index in range(count)]
    decide(records[0], reviewer)
    decide(records[1], reviewer, approve=False)
    write(agent, value="supersedes a promoted one", supersedes=records[0].memory_id)
    for tab in ("open", "approved", "rejected", "all"):
        with django_assert_num_queries(LIST_QUERIES):
            response = reviewer_browser.get(f"/promotions/?status={tab}")
        assert response.status_code == 200
    with django_assert_num_queries(PARTIAL_QUERIES):
        reviewer_browser.get("/promotions/?status=all", HTTP_HX_REQUEST="true")


def test_the_queue_sits_beside_escalations_in_the_navigation(reviewer_browser, db):
    page = reviewer_browser.get("/promotions/").content.decode()
    nav = page[page.index('<nav class="nav"') : page.index("</nav>")]
    assert nav.index(">Escalations<") < nav.index(">Promotions<")
    assert 'href="/promotions/" class="active" aria-current="page"' in nav


def test_the_escalation_queue_names_the_memory_a_promotion_is_about(reviewer_browser, agent, basis):
    waiting = write(agent)
    page = reviewer_browser.get("/escalations/").content.decode()
    assert '<span class="tag">memory</span>' in page
    assert f'href="/memories/{waiting.memory_id}/"' in page


# --- Deciding -----------------------------------------------------------------------------------


def test_a_reviewer_promotes_with_a_rationale(reviewer_browser, reviewer, agent, basis):
    first = decide(write(agent), reviewer)
    waiting = write(agent, value="read again, then retry once", supersedes=first.memory_id)

    response = reviewer_browser.post(
        f"/promotions/{promotion_of(waiting).escalation_id}/approve/",
        {"rationale": "Matches the owner's runbook."},
        HTTP_X_REQUEST_ID="req-console-promote",
    )

    assert response.status_code == 302
    assert response["Location"] == f"/memories/{waiting.memory_id}/"
    waiting.refresh_from_db()
    first.refresh_from_db()
    assert (waiting.status, first.status) == ("active", "superseded")
    audit = AuditEvent.objects.get(action="memory.promote", object_ref=waiting.memory_id)
    assert (audit.actor, audit.reason, audit.request_id) == (
        reviewer.user,
        "Matches the owner's runbook.",
        "req-console-promote",
    )
    page = reviewer_browser.get(response["Location"]).content.decode()
    assert f"Memory {waiting.memory_id} promoted: it is active." in page
    assert 'id="approve-form"' not in page


def test_a_reviewer_rejects_with_a_rationale(reviewer_browser, agent, basis):
    waiting = write(agent)
    response = reject(reviewer_browser, waiting, rationale="Not how the owner does it.")
    assert response.status_code == 302
    waiting.refresh_from_db()
    assert waiting.status == "rejected"
    assert AuditEvent.objects.filter(action="memory.reject", object_ref=waiting.memory_id).exists()


def test_the_writer_is_refused_by_the_server_and_told_why(writer_reviewer, basis):
    mine = write(writer_reviewer)
    response = approve(signed_in(writer_reviewer), mine, rationale="I wrote it, I trust it")

    assert response.status_code == 403
    page = response.content.decode()
    assert "a reviewer never decides an escalation they raised" in page
    assert "self_approval_forbidden" in page
    assert "You wrote this memory; another reviewer must decide its promotion." in page
    mine.refresh_from_db()
    assert mine.status == "suggested"
    assert not AuditEvent.objects.filter(action__in=["memory.promote", "memory.reject"]).exists()


@pytest.mark.parametrize(
    ("verb", "rationale", "status", "code"),
    [("approve", "   ", 400, "rationale_required"), ("reject", "", 400, "rationale_required")],
)
def test_a_missing_rationale_is_shown_beside_the_form(
    reviewer_browser, agent, basis, verb, rationale, status, code
):
    waiting = write(agent)
    post = approve if verb == "approve" else reject
    response = post(reviewer_browser, waiting, rationale=rationale)
    assert response.status_code == status
    page = response.content.decode()
    assert 'id="decision-error"' in page and code in page
    assert 'aria-invalid="true"' in page
    waiting.refresh_from_db()
    assert waiting.status == "suggested"


def test_a_decided_promotion_cannot_be_decided_again(reviewer_browser, agent, basis):
    waiting = write(agent)
    reject(reviewer_browser, waiting, rationale="no")
    response = approve(reviewer_browser, waiting, rationale="yes after all")
    assert response.status_code == 409
    assert "already_decided" in response.content.decode()
    waiting.refresh_from_db()
    assert waiting.status == "rejected"


def test_only_promotions_are_decided_here(reviewer_browser, escalation):
    response = reviewer_browser.post(
        f"/promotions/{escalation.escalation_id}/approve/", {"rationale": "wrong door"}
    )
    assert response.status_code == 404
    escalation.refresh_from_db()
    assert escalation.status == "open"


def test_the_form_is_csrf_protected(reviewer, agent, basis):
    waiting = write(agent)
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(reviewer.user)
    page = client.get(f"/memories/{waiting.memory_id}/").content.decode()
    assert page.count('name="csrfmiddlewaretoken"') >= 3  # both forms and sign-out
    response = approve(client, waiting, rationale="no token")
    assert response.status_code == 403
    waiting.refresh_from_db()
    assert waiting.status == "suggested"


def test_a_suggestion_whose_evidence_was_corrected_says_so_and_is_not_promoted(
    reviewer_browser, agent, operator, basis
):
    waiting = write(agent)
    correction = correction_create(
        evidence_id=basis, reason="not our playbook", actor=operator.user
    )

    page = reviewer_browser.get(f"/memories/{waiting.memory_id}/").content.decode()
    banner = page.split('id="memory-tainted"', 1)[1].split("</p>", 1)[0]
    assert f'href="/corrections/{correction.correction_id}/"' in banner
    assert f"({basis})" in banner and "cannot be promoted" in banner

    response = approve(reviewer_browser, waiting, rationale="looks right to me")
    assert response.status_code == 409
    assert 'id="decision-error"' in response.content.decode()
    assert "memory_tainted" in response.content.decode()
    waiting.refresh_from_db()
    assert waiting.status == "suggested"
    assert reject(reviewer_browser, waiting, rationale="its grounds are gone").status_code == 302
    waiting.refresh_from_db()
    assert waiting.status == "rejected"
