"""The quarantine page: every source and memory class with its state, the operators' dialogs
(preview, reason, typed confirmation), the row that polls until the task has applied, lifting,
and the history.

Inside a test transaction nothing runs on commit, so a new quarantine stays "applying" until
the test plays the worker with `quarantine_apply`.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from django.utils import timezone

from reconcile_app.console.mixins import MAX_POLLS
from reconcile_app.models import AuditEvent, Quarantine
from reconcile_app.services.quarantine import quarantine_apply, quarantine_create, quarantine_lift
from tests.reconcile_app.console.conftest import signed_in

# session, user, the user's groups, the history's count and page, the sources, the memory
# classes (one UNION), the active quarantines, the quarantine timeline.
PAGE_QUERIES = 9
PARTIAL_QUERIES = 5  # the history region only: targets and timeline sit outside it
# session, user, the user's groups, the active quarantine, the source.
ROW_QUERIES = 5

CASE = "case-service"
ROW = "#target-source-case-service"


def new(client, target=CASE, scope="source", htmx=True):
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    return client.get(f"/quarantine/new/?scope={scope}&target={target}", **headers)


def create(
    client,
    target=CASE,
    *,
    scope="source",
    reason="Owner reports corrupt exports.",
    confirm=None,
    htmx=True,
    **extra,
):
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    data = {
        "scope": scope,
        "target": target,
        "reason": reason,
        "confirm": target if confirm is None else confirm,
        **extra,
    }
    return client.post("/quarantine/new/", data, **headers)


def lift(client, quarantine, reason="Owner fixed the export.", htmx=True):
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    return client.post(
        f"/quarantine/{quarantine.quarantine_id}/lift/", {"reason": reason}, **headers
    )


def row_of(page: str, dom_id: str) -> str:
    match = re.search(rf'<tr [^>]*id="{dom_id}".*?</tr>', page, re.S)
    assert match, f"no row {dom_id}"
    return match.group(0)


@pytest.fixture
def quarantined(estate, operator) -> Quarantine:
    """case-service quarantined by the operator and applied by the worker."""
    quarantine = quarantine_create(
        scope="source", target=CASE, reason="Owner reports corrupt exports.", actor=operator.user
    )
    return quarantine_apply(quarantine_id=quarantine.quarantine_id)


# --- The page -------------------------------------------------------------------------------


def test_every_source_and_memory_class_is_listed_with_its_state(
    auditor_browser, estate, make_snapshot, operator
):
    make_snapshot(claimed="collect")  # a claim of class "episodic"
    # A class known only because a quarantine once named it (lifted since) is still listed.
    old = quarantine_create(
        scope="memory_class", target="legacy-notes", reason="import bug", actor=operator.user
    )
    quarantine_lift(quarantine_id=old.quarantine_id, reason="fixed", actor=operator.user)
    page = auditor_browser.get("/quarantine/").content.decode()
    for source in ("case-service", "complaints-service", "customer-master", "eval-registry"):
        row = row_of(page, f"target-source-{source}")
        assert 'data-state="trusted"' in row
        assert "owned by" in row
    for memory_class in ("episodic", "legacy-notes"):
        row = row_of(page, f"target-memory-class-{memory_class}")
        assert '<span class="badge badge-grey">trusted</span>' in row


def test_memory_classes_of_stored_memories_are_listed(auditor_browser, registry, agent):
    from tests.reconcile_app.facts.conftest import remember

    remember(agent, "baseline.math-eval", "m-1", "ckpt-0519", "registry@r18")
    page = auditor_browser.get("/quarantine/").content.decode()
    assert 'data-state="trusted"' in row_of(page, "target-memory-class-operational")


def test_an_active_quarantine_shows_who_why_since_and_what_it_affects(
    auditor_browser, quarantined, make_snapshot
):
    row = row_of(auditor_browser.get("/quarantine/").content.decode(), "target-source-case-service")
    assert '<span class="badge badge-purple">applied</span>' in row
    assert "olivia-operator" in row
    assert "Owner reports corrupt exports." in row
    assert "<time datetime=" in row
    assert "until lifted" in row
    for label in ("snapshots", "allowed decisions", "pending effects", "effects"):
        assert label in row
    assert 'data-polling="false"' in row and "hx-trigger" not in row


def test_operators_are_offered_the_dialogs_and_others_see_state_only(
    operator_browser, auditor_browser, reviewer_browser, quarantined
):
    page = operator_browser.get("/quarantine/").content.decode()
    assert 'href="/quarantine/new/?scope=source&amp;target=complaints-service"' in page
    assert f'href="/quarantine/{quarantined.quarantine_id}/lift/"' in page
    assert '<dialog id="ops-dialog"' in page
    for client in (auditor_browser, reviewer_browser):
        page = client.get("/quarantine/").content.decode()
        assert "/quarantine/new/" not in page and "/lift/" not in page
        assert "ops-dialog" not in page
        assert 'id="state-only"' in page


def test_page_loads_its_dialog_script_and_styles_locally(operator_browser, estate):
    page = operator_browser.get("/quarantine/").content.decode()
    assert '<script src="/static/reconcile/dialog.js" defer></script>' in page
    assert '<link rel="stylesheet" href="/static/reconcile/oversight.css">' in page
    assert "<script>" not in page  # the CSP forbids inline scripts


# --- The dialog -----------------------------------------------------------------------------


def test_dialog_previews_what_a_source_quarantine_would_touch(operator_browser, make_snapshot):
    make_snapshot(claimed="collect")
    response = new(operator_browser)
    assert response.status_code == 200
    body = response.content.decode()
    assert "<html" not in body
    assert '<li data-name="snapshots"><strong class="num">1</strong> snapshots</li>' in body
    assert 'data-name="effects_pending"' in body
    assert 'data-must-match="case-service"' in body
    assert 'name="reason"' in body and "required" in body
    assert 'type="datetime-local"' in body
    assert 'hx-post="/quarantine/new/"' in body
    assert "csrfmiddlewaretoken" in body
    assert not Quarantine.objects.exists()  # the preview writes nothing


def test_dialog_previews_a_memory_class(operator_browser, registry, agent):
    from tests.reconcile_app.facts.conftest import remember

    remember(agent, "baseline.math-eval", "m-1", "ckpt-0519", "registry@r18")
    body = new(operator_browser, "operational", scope="memory_class").content.decode()
    assert '<li data-name="memories"><strong class="num">1</strong> memories</li>' in body
    assert "never count as confirmed" in body


def test_dialog_without_htmx_is_a_page_of_its_own(operator_browser, estate):
    response = new(operator_browser, htmx=False)
    body = response.content.decode()
    assert response.status_code == 200
    assert "<html" in body and 'id="quarantine-form"' in body
    assert 'class="active" aria-current="page">Quarantine</a>' in body


@pytest.mark.parametrize(
    "query", ["scope=source&target=nowhere", "scope=galaxy&target=x", "scope=memory_class&target=x"]
)
def test_dialog_for_an_unknown_target_is_not_found(operator_browser, estate, query):
    assert operator_browser.get(f"/quarantine/new/?{query}").status_code == 404


def test_dialog_for_a_quarantined_target_says_so(operator_browser, quarantined):
    response = new(operator_browser)
    assert response.status_code == 409
    body = response.content.decode()
    assert 'id="already-quarantined"' in body and 'id="quarantine-form"' not in body


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


def test_a_reason_is_required(operator_browser, estate):
    response = create(operator_browser, reason="   ")
    assert response.status_code == 400
    assert "reason_required" in response.content.decode()
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
    assert json.loads(response["HX-Trigger"]) == {"quarantine-changed": "", "dialog-done": ""}
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
    assert event.after == {"scope": "source", "target": CASE, "status": "applying"}


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
    assert (event.before, event.after) == ({"status": "applied"}, {"status": "lifted"})


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
