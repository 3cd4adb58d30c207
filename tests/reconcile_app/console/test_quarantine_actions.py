"""Quarantining and lifting from the console: the typed confirmation, the row that polls
until the task has applied, lifting, the history, and who may."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from django.utils import timezone

from reconcile_app.canonical import rfc3339
from reconcile_app.console.mixins import MAX_POLLS
from reconcile_app.models import AuditEvent, Quarantine
from reconcile_app.services.quarantine import quarantine_apply, quarantine_create, quarantine_lift
from tests.reconcile_app.console.conftest import signed_in
from tests.reconcile_app.console.quarantine_steps import (
    CASE,
    PAGE_QUERIES,
    PARTIAL_QUERIES,
    ROW,
    ROW_QUERIES,
    create,
    lift,
    new,
    quarantined,  # noqa: F401 (a fixture)
    row_of,
)

# --- Creating -------------------------------------------------------------------------------


@pytest.mark.parametrize("typed", ["", "Case-service", "case-service ", "case"])
def test_the_name_must_be_typed_exactly(operator_browser, estate, typed):
    response = create(operator_browser, confirm=typed, reason="Corrupt exports.")
    assert response.status_code == 400
    body = response.content.decode()
    assert "confirmation_mismatch" in body
    assert "Corrupt exports." in body  # the draft is kept
    assert not Quarantine.objects.exists()
    assert not AuditEvent.objects.filter(action__startswith="quarantine.").exists()


@pytest.mark.parametrize("reason", ["   ", "\u200b\ufeff"])
def test_a_reason_is_required(operator_browser, estate, reason):
    response = create(operator_browser, reason=reason)
    assert response.status_code == 400
    assert "reason_required" in response.content.decode()
    assert not Quarantine.objects.exists()


@pytest.mark.parametrize("ends_at", ["tomorrow", "2026-13-45T99:99"])
def test_an_end_time_that_is_no_time_is_marked_on_its_field(operator_browser, estate, ends_at):
    body = create(operator_browser, ends_at=ends_at).content.decode()
    assert 'data-code="invalid_ends_at"' in body or ">invalid_ends_at<" in body
    assert re.search(r'id="quarantine-ends-at"[^>]*aria-invalid="true"', body)
    assert not Quarantine.objects.exists()


def test_end_time_in_the_past_is_refused_and_a_future_one_is_kept(operator_browser, estate):
    past = (timezone.now() - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")
    response = create(operator_browser, ends_at=past)
    assert response.status_code == 400 and "invalid_ends_at" in response.content.decode()
    future = timezone.now() + timedelta(days=2)
    assert create(operator_browser, ends_at=future.strftime("%Y-%m-%dT%H:%M")).status_code == 200
    quarantine = Quarantine.objects.get()
    assert quarantine.ends_at == future.replace(second=0, microsecond=0)
    row = row_of(
        operator_browser.get("/quarantine/").content.decode(), "target-source-case-service"
    )
    assert f'<time datetime="{future:%Y-%m-%dT%H:%M}:00Z"' in row


def test_a_second_quarantine_of_the_same_target_is_a_conflict(operator_browser, quarantined):
    response = create(operator_browser)
    assert response.status_code == 409
    assert "already_quarantined" in response.content.decode()
    assert Quarantine.objects.count() == 1


def test_creating_through_htmx_swaps_the_row_which_polls_until_applied(operator_browser, estate):
    response = create(operator_browser)
    assert response.status_code == 200
    assert response["HX-Retarget"] == ROW
    assert response["HX-Reswap"] == "outerHTML"
    trigger = json.loads(response["HX-Trigger"])
    assert trigger.pop("console-message")["level"] == "success"  # the page confirms it
    assert trigger == {"quarantine-changed": "", "dialog-done": ""}
    row = response.content.decode()
    assert row.lstrip().startswith("<tr ")
    assert 'data-state="applying"' in row and 'data-polling="true"' in row
    assert 'hx-get="/quarantine/targets/source/case-service/?polls=1&amp;since=applying"' in row
    assert 'hx-trigger="every 2s"' in row
    assert "listing what it affects" in row

    # The worker has not run yet: the same row comes back, still polling, no event.
    still = operator_browser.get("/quarantine/targets/source/case-service/?polls=1&since=applying")
    assert 'data-state="applying"' in still.content.decode()
    assert "polls=2" in still.content.decode()
    assert "HX-Trigger" not in still

    quarantine_apply(quarantine_id=Quarantine.objects.get().quarantine_id)
    done = operator_browser.get("/quarantine/targets/source/case-service/?polls=2&since=applying")
    row = done.content.decode()
    assert 'data-state="applied"' in row and 'data-polling="false"' in row
    assert "hx-trigger" not in row and "hx-get=" not in row.split(">", 1)[0]
    assert 'class="pair affected" data-count="snapshots"' in row
    # The page re-reads its history and timeline when the state moved on.
    assert done["HX-Trigger"] == "quarantine-changed"


def test_polling_stops_after_a_while_and_says_so(operator_browser, estate):
    create(operator_browser)
    row = operator_browser.get(
        f"/quarantine/targets/source/case-service/?polls={MAX_POLLS}&since=applying"
    ).content.decode()
    assert 'data-polling="false"' in row and "hx-trigger" not in row
    assert "stopped refreshing" in row


def test_creating_without_htmx_redirects_with_a_message(operator_browser, estate):
    response = create(operator_browser, htmx=False)
    assert response.status_code == 302 and response["Location"] == "/quarantine/"
    page = operator_browser.get("/quarantine/").content.decode()
    assert "Quarantine of case-service created; applying." in page
    assert 'data-state="applying"' in row_of(page, "target-source-case-service")


def test_creating_is_audited_with_the_request_id(operator_browser, estate, operator):
    response = create(operator_browser)
    assert response.status_code == 200
    quarantine = Quarantine.objects.get()
    assert (quarantine.status, quarantine.created_by) == ("applying", operator.user)
    event = AuditEvent.objects.get(action="quarantine.create")
    assert (event.object_kind, event.object_ref) == ("quarantine", quarantine.quarantine_id)
    # The same id as the response header (and the access log).
    assert event.request_id == response["X-Request-ID"] != ""
    assert event.reason == "Owner reports corrupt exports."
    assert event.after == {
        "scope": "source",
        "target": CASE,
        "status": "applying",
        "since": rfc3339(quarantine.since),
        "ends_at": None,
    }


def test_a_memory_class_is_quarantined_the_same_way(operator_browser, make_snapshot):
    make_snapshot(claimed="collect")
    response = create(operator_browser, "episodic", scope="memory_class")
    assert response.status_code == 200
    assert response["HX-Retarget"] == "#target-memory-class-episodic"
    assert Quarantine.objects.get().scope == "memory_class"


# --- Lifting --------------------------------------------------------------------------------


def test_lift_dialog_summarises_what_is_in_force(operator_browser, quarantined):
    response = operator_browser.get(
        f"/quarantine/{quarantined.quarantine_id}/lift/", HTTP_HX_REQUEST="true"
    )
    body = response.content.decode()
    assert response.status_code == 200
    assert quarantined.quarantine_id in body and "Owner reports corrupt exports." in body
    assert 'id="lift-form"' in body and 'name="reason"' in body


def test_lifting_needs_a_reason(operator_browser, quarantined):
    response = lift(operator_browser, quarantined, reason="")
    assert response.status_code == 400
    assert "reason_required" in response.content.decode()
    assert Quarantine.objects.get().status == "applied"


def test_lifting_returns_the_row_trusted_and_is_audited(operator_browser, quarantined, operator):
    response = operator_browser.post(
        f"/quarantine/{quarantined.quarantine_id}/lift/",
        {"reason": "Owner fixed the export."},
        HTTP_HX_REQUEST="true",
        HTTP_X_REQUEST_ID="req-lift-1",
    )
    assert response.status_code == 200
    assert response["HX-Retarget"] == ROW
    row = response.content.decode()
    assert 'data-state="trusted"' in row
    assert 'href="/quarantine/new/?scope=source&amp;target=case-service"' in row
    quarantine = Quarantine.objects.get()
    assert (quarantine.status, quarantine.lifted_by) == ("lifted", operator.user)
    event = AuditEvent.objects.get(action="quarantine.lift")
    assert (event.reason, event.request_id) == ("Owner fixed the export.", "req-lift-1")
    assert (event.before, event.after) == (
        {"status": "applied"},
        {"status": "lifted", "effects_resumed": 0},
    )


def test_lifting_twice_says_it_is_already_lifted(operator_browser, quarantined):
    lift(operator_browser, quarantined)
    response = operator_browser.get(
        f"/quarantine/{quarantined.quarantine_id}/lift/", HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 409 and 'id="already-lifted"' in response.content.decode()
    again = lift(operator_browser, quarantined)
    assert again.status_code == 409 and "not_active" in again.content.decode()
    assert AuditEvent.objects.filter(action="quarantine.lift").count() == 1


def test_lifting_an_unknown_quarantine_is_not_found(operator_browser, estate):
    assert operator_browser.get("/quarantine/qua_nope/lift/").status_code == 404
    assert operator_browser.post("/quarantine/qua_nope/lift/", {"reason": "x"}).status_code == 404


def test_lifting_without_htmx_redirects_with_a_message(operator_browser, quarantined):
    response = lift(operator_browser, quarantined, htmx=False)
    assert response.status_code == 302
    assert (
        "Quarantine of case-service lifted."
        in operator_browser.get("/quarantine/").content.decode()
    )


# --- History and timeline -------------------------------------------------------------------


def history_of(page: str) -> str:
    return page.split('id="quarantine-history"', 1)[1].split("</table>", 1)[0]


def test_history_lists_past_quarantines_and_filters_them(auditor_browser, quarantined, operator):
    quarantine_lift(quarantine_id=quarantined.quarantine_id, reason="fixed", actor=operator.user)
    current = quarantine_create(
        scope="memory_class", target="episodic", reason="poisoned", actor=operator.user
    )
    page = auditor_browser.get("/quarantine/").content.decode()
    history = history_of(page)
    assert quarantined.quarantine_id in history and current.quarantine_id in history
    assert "fixed" in history and "olivia-operator" in history
    lifted = auditor_browser.get("/quarantine/?status=lifted").content.decode()
    lifted_history = history_of(lifted)
    assert quarantined.quarantine_id in lifted_history
    assert current.quarantine_id not in lifted_history
    by_scope = auditor_browser.get("/quarantine/?scope=memory_class").content.decode()
    assert quarantined.quarantine_id not in history_of(by_scope)
    assert current.quarantine_id in history_of(by_scope)


def test_history_rows_unfold_their_audit_timeline(auditor_browser, quarantined):
    page = auditor_browser.get("/quarantine/").content.decode()
    url = f"/audit/timeline/quarantine/{quarantined.quarantine_id}/?compact=1"
    assert f'hx-get="{url}"' in page
    timeline = auditor_browser.get(url).content.decode()
    assert 'data-action="quarantine.create"' in timeline
    assert "Owner reports corrupt exports." in timeline


def test_page_shows_the_latest_actions_on_quarantines(auditor_browser, quarantined, operator):
    quarantine_lift(quarantine_id=quarantined.quarantine_id, reason="fixed", actor=operator.user)
    page = auditor_browser.get("/quarantine/").content.decode()
    timeline = page.split('id="quarantine-timeline"', 1)[1]
    assert timeline.index('data-action="quarantine.create"') < timeline.index(
        'data-action="quarantine.lift"'
    )
    assert 'hx-trigger="quarantine-changed from:body"' in page


def test_htmx_request_gets_the_history_region(auditor_browser, quarantined):
    body = auditor_browser.get("/quarantine/?status=applied", HTTP_HX_REQUEST="true").content
    text = body.decode()
    assert text.lstrip().startswith('<section id="quarantine-history-region"')
    assert quarantined.quarantine_id in text and "<html" not in text


@pytest.mark.parametrize("count", [1, 6])
def test_query_counts_do_not_grow_with_targets_or_history(
    operator_browser, estate, operator, make_snapshot, django_assert_num_queries, count
):
    make_snapshot(claimed="collect")
    for index in range(count):
        made = quarantine_create(
            scope="memory_class", target=f"class-{index}", reason="r", actor=operator.user
        )
        if index % 2:
            quarantine_lift(quarantine_id=made.quarantine_id, reason="ok", actor=operator.user)
    quarantine_create(scope="source", target=CASE, reason="r", actor=operator.user)
    with django_assert_num_queries(PAGE_QUERIES):
        assert operator_browser.get("/quarantine/").status_code == 200
    with django_assert_num_queries(PARTIAL_QUERIES):
        operator_browser.get("/quarantine/?scope=memory_class", HTTP_HX_REQUEST="true")
    with django_assert_num_queries(ROW_QUERIES):
        operator_browser.get("/quarantine/targets/source/case-service/?polls=1&since=applying")


# --- Who may ------------------------------------------------------------------------------


@pytest.mark.parametrize("persona", ["reviewer", "auditor", "agent"])
def test_only_operators_open_dialogs_or_post(request, quarantined, persona):
    client = signed_in(request.getfixturevalue(persona))
    assert new(client, "complaints-service").status_code == 403
    assert create(client, "complaints-service").status_code == 403
    assert lift(client, quarantined).status_code == 403
    assert Quarantine.objects.get().status == "applied"
    assert AuditEvent.objects.filter(action__startswith="quarantine.").count() == 1


def test_agent_user_cannot_see_the_page(agent, estate):
    assert signed_in(agent).get("/quarantine/").status_code == 403


def test_posts_need_the_csrf_token(operator, quarantined):
    client = signed_in(operator, enforce_csrf_checks=True)
    assert create(client, "complaints-service").status_code == 403
    assert lift(client, quarantined).status_code == 403
    assert Quarantine.objects.get().status == "applied"


@pytest.mark.parametrize("field", ["scope", "target"])
def test_a_nul_in_the_posted_target_is_not_found_not_a_server_error(
    operator_browser, estate, field
):
    # The form refuses the NUL; the dialog redrawn beside its error looked the target up
    # anyway, which PostgreSQL answers with an error of its own (a 500).
    posted = {"scope": "source", "target": CASE, field: "case\x00service"}
    response = create(operator_browser, **{**posted, "confirm": posted["target"]})
    assert response.status_code == 404
    assert not Quarantine.objects.exists()
    assert not AuditEvent.objects.filter(action__startswith="quarantine.").exists()
