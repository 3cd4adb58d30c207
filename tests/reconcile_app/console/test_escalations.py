"""The escalation queue, one escalation side by side, and reviewers' decisions in the console."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from reconcile_app.models import AuditEvent, Escalation, MemoryRecord
from tests.reconcile_app.console.conftest import BASELINE, SETUP_KINDS, ambiguous_fact, signed_in

# session, user, the user's groups, the tab counts, the paginator's count, the page of rows,
# and the filter form's suggestions (owners and codes, one query).
# (+1: the live watermark, rows matching and the newest id: reconcile_app/console/live.py)
LIST_QUERIES = 8
PARTIAL_QUERIES = 7  # the suggestion lists sit outside the swapped region
# session, user, the user's groups, the escalation with what it names, its candidates, its
# audit timeline.
DETAIL_QUERIES = 6


def approve(client: Client, escalation: Escalation, **data: str):
    return client.post(f"/escalations/{escalation.escalation_id}/approve/", data)


def reject(client: Client, escalation: Escalation, **data: str):
    return client.post(f"/escalations/{escalation.escalation_id}/reject/", data)


def row_ids(page: str) -> list[str]:
    return re.findall(r'<tr id="escalation-(esc_[0-9a-f]+)"', page)


# --- The queue ------------------------------------------------------------------------------


def test_queue_lists_open_escalations_with_age_owner_and_links(reviewer_browser, escalation):
    page = reviewer_browser.get("/escalations/").content.decode()
    assert row_ids(page) == [escalation.escalation_id]
    assert f'href="/escalations/{escalation.escalation_id}/"' in page
    assert '<span class="tag mono">authority_ambiguous</span>' in page
    assert f'href="/facts/{BASELINE}/"' in page
    assert "eval-registry" in page and "collections-agent" in page
    assert "confirm which record is the registered" in page
    assert '<span class="badge badge-amber">open</span>' in page
    assert re.search(r'<span class="age" title="since [^"]+">\d', page)


def test_open_queue_puts_the_longest_waiting_first(reviewer_browser, registry, agent):
    newer = ambiguous_fact(agent, agent, "baseline.newer")
    older = ambiguous_fact(agent, agent, "baseline.older")
    Escalation.objects.filter(pk=older.pk).update(opened_at=timezone.now() - timedelta(days=2))
    page = reviewer_browser.get("/escalations/").content.decode()
    assert row_ids(page) == [older.escalation_id, newer.escalation_id]
    assert "2d 00h" in page


def test_status_tabs_count_and_filter(reviewer_browser, registry, agent):
    decided = ambiguous_fact(agent, agent, "baseline.decided")
    waiting = ambiguous_fact(agent, agent, "baseline.waiting")
    approve(reviewer_browser, decided, rationale="registry confirms", selected_ref="decided-v18")

    open_tab = reviewer_browser.get("/escalations/").content.decode()
    assert re.search(r'class="tab active">Open <span class="tab-count">1</span>', open_tab)
    assert 'Approved <span class="tab-count">1</span>' in open_tab
    assert 'Rejected <span class="tab-count">0</span>' in open_tab
    assert 'All <span class="tab-count">2</span>' in open_tab
    assert row_ids(open_tab) == [waiting.escalation_id]

    approved = reviewer_browser.get("/escalations/?status=approved").content.decode()
    assert row_ids(approved) == [decided.escalation_id]
    assert "rhys-reviewer" in approved  # who decided, in the decision column
    assert row_ids(reviewer_browser.get("/escalations/?status=rejected").content.decode()) == []
    everything = reviewer_browser.get("/escalations/?status=all").content.decode()
    # Open first, then decided.
    assert row_ids(everything) == [waiting.escalation_id, decided.escalation_id]


def test_owner_and_code_filters_narrow_rows_and_counts(reviewer_browser, registry, agent):
    from tests.reconcile_app.facts.conftest import authority

    mine = ambiguous_fact(agent, agent, "baseline.mine")
    other = ambiguous_fact(agent, agent, "baseline.other")
    authority("baseline.other", owner="platform-evals")
    Escalation.objects.filter(pk=other.pk).update(owner="platform-evals")

    page = reviewer_browser.get("/escalations/?owner=platform-evals").content.decode()
    assert row_ids(page) == [other.escalation_id]
    assert 'All <span class="tab-count">1</span>' in page
    # Tabs keep the filter.
    assert 'href="/escalations/?status=approved&amp;owner=platform-evals"' in page
    by_code = reviewer_browser.get("/escalations/?code=authority_ambiguous").content.decode()
    assert set(row_ids(by_code)) == {mine.escalation_id, other.escalation_id}
    assert row_ids(reviewer_browser.get("/escalations/?code=owner_missing").content.decode()) == []
    # The filter form suggests the owners and codes that exist.
    full = reviewer_browser.get("/escalations/").content.decode()
    assert '<option value="platform-evals">' in full and '<option value="eval-registry">' in full
    assert '<option value="authority_ambiguous">' in full


def test_htmx_request_gets_the_region_partial(reviewer_browser, escalation):
    response = reviewer_browser.get("/escalations/?status=all", HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert body.lstrip().startswith('<section id="escalation-region"')
    assert "<html" not in body and 'id="known-owners"' not in body
    assert "HX-Request" in response["Vary"]


# One approved and one rejected, plus one or twelve open: every tab has rows to render.
@pytest.mark.parametrize("count", [3, 14])
def test_queue_query_count_does_not_grow_with_rows(
    reviewer_browser, registry, agent, django_assert_num_queries, count
):
    for index in range(count):
        ambiguous_fact(agent, agent, f"baseline.eval-{index}")
    first, second = Escalation.objects.order_by("pk")[:2]
    approve(reviewer_browser, first, rationale="decided", selected_ref=first.candidate_refs[0])
    reject(reviewer_browser, second, rationale="not yet")
    for tab in ("open", "approved", "rejected", "all"):
        with django_assert_num_queries(LIST_QUERIES):
            response = reviewer_browser.get(f"/escalations/?status={tab}")
        assert response.status_code == 200
    with django_assert_num_queries(PARTIAL_QUERIES):
        reviewer_browser.get("/escalations/?status=all", HTTP_HX_REQUEST="true")


# --- One escalation -----------------------------------------------------------------------------


def test_detail_shows_the_seed_fields(auditor_browser, escalation):
    page = auditor_browser.get(f"/escalations/{escalation.escalation_id}/").content.decode()
    for text in (
        escalation.escalation_id,
        "authority_ambiguous",
        f'href="/facts/{BASELINE}/"',
        "eval-registry",
        escalation.next_action,
        '<span class="tag mono">read_history</span>',
        "no — writes wait for the decision",
        "collections-agent",
    ):
        assert text in page, text
    assert '<span class="badge badge-purple">frozen</span>' in page


def test_candidates_are_shown_side_by_side(auditor_browser, escalation):
    page = auditor_browser.get(f"/escalations/{escalation.escalation_id}/").content.decode()
    table = page[
        page.index('id="candidates"') : page.index("</table>", page.index('id="candidates"'))
    ]
    # One column per candidate, in the escalation's order.
    assert table.index("math-eval-v18<") < table.index("math-eval-v18b<")
    for text in ("ckpt-0519", "ckpt-0520", "registry@r18", "2026-12-31", "ev-registry-r18"):
        assert text in table, text
    assert table.count('<span class="badge badge-green">current</span>') == 2
    assert "math-eval-v17" in table  # v18 supersedes it
    # The value differs between them; the owner does not.
    assert re.search(r'<tr class="differs">\s*<th scope="row">Value</th>', table)
    assert re.search(r'<tr>\s*<th scope="row">Owner</th>', table)


@pytest.mark.parametrize("candidates", [2, 6])
def test_detail_query_count_does_not_grow_with_candidates(
    auditor_browser, escalation, agent, django_assert_num_queries, candidates
):
    from tests.reconcile_app.facts.conftest import remember

    Escalation.objects.filter(pk=escalation.pk).update(status="rejected")  # unfreeze to write
    refs = list(escalation.candidate_refs)
    for index in range(candidates - 2):
        remember(agent, BASELINE, f"extra-{index}", f"ckpt-{index}", "registry@r18")
        refs.append(f"extra-{index}")
    Escalation.objects.filter(pk=escalation.pk).update(status="open", candidate_refs=refs)
    with django_assert_num_queries(DETAIL_QUERIES):
        response = auditor_browser.get(f"/escalations/{escalation.escalation_id}/")
    assert response.content.decode().count('class="candidate-head"') == candidates


def test_unknown_escalation_is_404(reviewer_browser, estate):
    assert reviewer_browser.get("/escalations/esc_nothing/").status_code == 404


# --- Who may decide -----------------------------------------------------------------------------


def test_reviewer_sees_approve_with_a_choice_of_candidate_and_reject(reviewer_browser, escalation):
    page = reviewer_browser.get(f"/escalations/{escalation.escalation_id}/").content.decode()
    assert f'action="/escalations/{escalation.escalation_id}/approve/"' in page
    assert f'action="/escalations/{escalation.escalation_id}/reject/"' in page
    assert 'type="radio" name="selected_ref" value="math-eval-v18"' in page
    assert 'type="radio" name="selected_ref" value="math-eval-v18b"' in page
    assert page.count('name="csrfmiddlewaretoken"') >= 2


@pytest.mark.parametrize("persona", ["operator", "auditor"])
def test_non_reviewers_see_no_forms_and_are_refused(request, escalation, persona):
    client = signed_in(request.getfixturevalue(persona))
    page = client.get(f"/escalations/{escalation.escalation_id}/").content.decode()
    assert "/approve/" not in page and "/reject/" not in page
    assert "Only reviewers approve or reject escalations." in page
    for post in (approve, reject):
        response = post(
            client, escalation, rationale="not mine to decide", selected_ref="math-eval-v18"
        )
        assert response.status_code == 403
    escalation.refresh_from_db()
    assert escalation.status == "open"
    assert not AuditEvent.objects.exclude(object_kind__in=SETUP_KINDS).exists()


def test_agent_user_is_refused(agent, escalation):
    client = signed_in(agent)
    assert client.get("/escalations/").status_code == 403
    assert client.get(f"/escalations/{escalation.escalation_id}/").status_code == 403
    assert (
        approve(client, escalation, rationale="x", selected_ref="math-eval-v18").status_code == 403
    )


def test_raiser_sees_a_note_instead_of_the_forms(reviewer_browser, own_escalation, reviewer):
    assert own_escalation.requested_by == reviewer.principal
    page = reviewer_browser.get(f"/escalations/{own_escalation.escalation_id}/").content.decode()
    assert "you raised this escalation; another reviewer must decide it" in page.lower()
    assert "/approve/" not in page and "/reject/" not in page


def test_self_approval_is_refused_by_the_server_and_shown(reviewer_browser, own_escalation):
    response = approve(
        reviewer_browser,
        own_escalation,
        rationale="I am sure",
        selected_ref=own_escalation.candidate_refs[0],
    )
    assert response.status_code == 403
    page = response.content.decode()
    assert "a reviewer never decides an escalation they raised" in page
    assert "self_approval_forbidden" in page
    own_escalation.refresh_from_db()
    assert own_escalation.status == "open"
    assert MemoryRecord.objects.filter(status="historical_only").count() == 0


def test_another_reviewer_may_decide_what_a_reviewer_raised(own_escalation, second_reviewer):
    client = signed_in(second_reviewer)
    page = client.get(f"/escalations/{own_escalation.escalation_id}/").content.decode()
    assert "/approve/" in page
    response = reject(client, own_escalation, rationale="ask the eval team")
    assert response.status_code == 302
    own_escalation.refresh_from_db()
    assert (own_escalation.status, own_escalation.decided_by) == ("rejected", second_reviewer.user)


# --- Deciding ---------------------------------------------------------------------------------


def test_approve_with_selection_retires_the_other_candidate(reviewer_browser, reviewer, escalation):
    response = reviewer_browser.post(
        f"/escalations/{escalation.escalation_id}/approve/",
        {"rationale": "The registry confirms v18.", "selected_ref": "math-eval-v18"},
        HTTP_X_REQUEST_ID="req-approve-1",
    )
    assert response.status_code == 302
    assert response["Location"] == f"/escalations/{escalation.escalation_id}/"

    assert MemoryRecord.objects.get(memory_id="math-eval-v18").status == "current"
    assert MemoryRecord.objects.get(memory_id="math-eval-v18b").status == "historical_only"
    escalation.refresh_from_db()
    assert escalation.status == "approved" and escalation.write_allowed
    assert escalation.selected_ref == "math-eval-v18"
    audit = AuditEvent.objects.get(action="escalation.approve")
    assert (audit.actor, audit.request_id, audit.after["retired"]) == (
        reviewer.user,
        "req-approve-1",
        ["math-eval-v18b"],
    )

    page = reviewer_browser.get(response["Location"]).content.decode()
    assert f"Escalation {escalation.escalation_id} approved." in page
    summary = page[page.index('id="decision-summary"') :]
    assert "rhys-reviewer" in summary and "The registry confirms v18." in summary
    assert '<span class="mono">math-eval-v18</span>' in summary
    assert '<span class="badge badge-green">kept</span>' in page
    assert "/approve/" not in page  # decided: no forms any more


def test_reject_records_the_decision_and_retires_nothing(reviewer_browser, escalation):
    response = reject(reviewer_browser, escalation, rationale="Ask the eval team first.")
    assert response.status_code == 302
    escalation.refresh_from_db()
    assert escalation.status == "rejected"
    assert MemoryRecord.objects.filter(fact_key=BASELINE, status="current").count() == 2
    assert AuditEvent.objects.filter(action="escalation.reject").count() == 1


@pytest.mark.parametrize(
    ("verb", "data", "status", "code", "message"),
    [
        (
            "approve",
            {"rationale": "", "selected_ref": "math-eval-v18"},
            400,
            "rationale_required",
            "a decision needs a rationale",
        ),
        ("reject", {"rationale": "   "}, 400, "rationale_required", "a decision needs a rationale"),
        ("approve", {"rationale": "ok"}, 400, "selection_required", "selects one candidate"),
        (
            "approve",
            {"rationale": "ok", "selected_ref": "math-eval-v17"},
            400,
            "invalid_selection",
            "is not a candidate",
        ),
    ],
)
def test_refusals_are_shown_inline_with_the_draft_kept(
    reviewer_browser, escalation, verb, data, status, code, message
):
    response = reviewer_browser.post(f"/escalations/{escalation.escalation_id}/{verb}/", data)
    assert response.status_code == status
    page = response.content.decode()
    alert = page[
        page.index('id="decision-error"') : page.index("</div>", page.index('id="decision-error"'))
    ]
    assert message in alert and code in alert
    if data["rationale"].strip():
        assert f">{data['rationale']}</textarea>" in page
    escalation.refresh_from_db()
    assert escalation.status == "open"
    assert not AuditEvent.objects.exclude(object_kind__in=SETUP_KINDS).exists()


def test_deciding_twice_is_a_conflict_shown_inline(reviewer_browser, escalation, second_reviewer):
    reject(reviewer_browser, escalation, rationale="first")
    response = approve(
        signed_in(second_reviewer), escalation, rationale="second", selected_ref="math-eval-v18"
    )
    assert response.status_code == 409
    assert "already_decided" in response.content.decode()
    assert AuditEvent.objects.exclude(object_kind__in=SETUP_KINDS).count() == 1


def test_decisions_enforce_csrf(reviewer, escalation):
    client = signed_in(reviewer, enforce_csrf_checks=True)
    forged = approve(client, escalation, rationale="forged", selected_ref="math-eval-v18")
    assert forged.status_code == 403
    escalation.refresh_from_db()
    assert escalation.status == "open"
    page = client.get(f"/escalations/{escalation.escalation_id}/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    genuine = client.post(
        f"/escalations/{escalation.escalation_id}/approve/",
        {"rationale": "genuine", "selected_ref": "math-eval-v18", "csrfmiddlewaretoken": token},
    )
    assert genuine.status_code == 302


def test_anonymous_decision_is_sent_to_login(escalation):
    response = approve(Client(), escalation, rationale="x", selected_ref="math-eval-v18")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


# --- Escalations about a decision -----------------------------------------------------------


@pytest.fixture
def decision_escalation(make_snapshot) -> Escalation:
    """An open complaint makes the collections policy escalate the decision."""
    from sandbox_app.services import sandbox_record_write

    sandbox_record_write(
        source="complaints-service",
        subject="account-17",
        field="complaint_status",
        value="open",
        valid_from=timezone.now() - timedelta(days=1),
    )
    snapshot = make_snapshot(state="collect")
    assert snapshot.result == "escalate"
    return Escalation.objects.get(snapshot=snapshot)


def test_decision_escalation_links_its_snapshot_and_is_decided_without_a_choice(
    reviewer_browser, decision_escalation
):
    snapshot_id = decision_escalation.snapshot.snapshot_id
    queue = reviewer_browser.get("/escalations/").content.decode()
    assert f'href="/snapshots/{snapshot_id}/"' in queue and "open_complaint" in queue
    page = reviewer_browser.get(
        f"/escalations/{decision_escalation.escalation_id}/"
    ).content.decode()
    assert 'id="candidates"' not in page and 'name="selected_ref"' not in page
    assert 'id="proposal"' in page and 'id="refs-h"' not in page  # the proposal, not raw refs
    response = approve(reviewer_browser, decision_escalation, rationale="Complaint withdrawn.")
    assert response.status_code == 302
    decision_escalation.refresh_from_db()
    assert decision_escalation.status == "approved"
