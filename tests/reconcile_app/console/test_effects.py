"""The unknown-outcome queue, one effect's timeline, and the operators' levers on it."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from reconcile_app.console.mixins import MAX_POLLS
from reconcile_app.models import AuditEvent, Effect, Escalation, EvidenceEntry
from tests.reconcile_app.console.conftest import commit_effect, read_back, signed_in

# session, user, the user's groups, the tab counts, the paginator's count, the page of rows,
# and the filter form's source suggestions.
LIST_QUERIES = 7
PARTIAL_QUERIES = 6  # the suggestions sit outside the swapped region
# session, user, the user's groups, the effect (with source, snapshot id, principal,
# decision), its timeline, its escalations, its audit timeline.
DETAIL_QUERIES = 7
# session, user, the user's groups, the effect, its latest step.
STATUS_QUERIES = 5


def keys(page: str) -> list[str]:
    return re.findall(r'<a class="mono" href="/effects/([^"/]+)/">', page)


@pytest.fixture
def mixed_effects(estate, agent) -> dict[str, Effect]:
    """One effect in each status the tabs show, made through the protocol."""
    effects = {}
    effects["unknown"] = commit_effect(agent, "u-1", fault="timeout_after_commit")
    effects["rejected"] = commit_effect(agent, "r-1", changed_meanwhile=True)
    effects["verified"] = read_back(commit_effect(agent, "v-1"))
    effects["postcondition_failed"] = read_back(
        commit_effect(agent, "p-1", fault="drop_postcondition")
    )
    effects["accepted"] = commit_effect(agent, "a-1")
    assert {key: effect.status for key, effect in effects.items()} == {key: key for key in effects}
    return effects


# --- The queue ------------------------------------------------------------------------------


def test_queue_shows_unknown_outcomes_by_default(operator_browser, unknown_effect):
    page = operator_browser.get("/effects/").content.decode()
    assert keys(page) == ["u-1"]
    assert '<span class="mono">release_collections_hold</span>' in page
    assert "account-u-1" in page and "case-service" in page
    assert '<span class="badge badge-amber">unknown</span>' in page
    assert re.search(r'<span class="age" title="since [^"]+">', page)
    # The automatic resolution is scheduled: the next check is shown.
    assert "<time datetime=" in page
    snapshot_id = unknown_effect.snapshot.snapshot_id
    assert f'href="/snapshots/{snapshot_id}/"' in page


def test_tabs_count_each_status_and_filter(operator_browser, mixed_effects):
    page = operator_browser.get("/effects/").content.decode()
    for label, count in [
        ("Unknown", 1),
        ("Postcondition failed", 1),
        ("Awaiting readback", 1),
        ("Verified", 1),
        ("Rejected", 1),
        ("Not executed", 0),
        ("All", 5),
    ]:
        assert f'{label} <span class="tab-count">{count}</span>' in page, label
    assert re.search(r'class="tab active">Unknown <span', page)
    for status, key in [
        ("postcondition_failed", "p-1"),
        ("accepted", "a-1"),
        ("verified", "v-1"),
        ("rejected", "r-1"),
    ]:
        assert keys(operator_browser.get(f"/effects/?status={status}").content.decode()) == [key]
    assert len(keys(operator_browser.get("/effects/?status=all").content.decode())) == 5
    assert keys(operator_browser.get("/effects/?status=not_executed").content.decode()) == []


def test_postcondition_failures_are_in_the_queue(operator_browser, mixed_effects):
    page = operator_browser.get("/effects/?status=postcondition_failed").content.decode()
    assert '<span class="badge badge-red">postcondition failed</span>' in page
    assert "1 readback" in page  # the attempt that found the change missing


def test_oldest_unknown_outcome_comes_first(operator_browser, estate, agent):
    commit_effect(agent, "u-new", fault="timeout_after_commit")
    commit_effect(agent, "u-old", fault="timeout_after_commit")
    Effect.objects.filter(idempotency_key="u-old").update(
        created_at=timezone.now() - timedelta(hours=3)
    )
    assert keys(operator_browser.get("/effects/").content.decode()) == ["u-old", "u-new"]


def test_filters_narrow_rows_and_counts(operator_browser, mixed_effects):
    page = operator_browser.get("/effects/?status=all&source=complaints-service").content.decode()
    assert keys(page) == []
    assert 'All <span class="tab-count">0</span>' in page
    page = operator_browser.get("/effects/?status=all&subject=account-v-1").content.decode()
    assert keys(page) == ["v-1"]
    # Tabs keep the filters.
    assert 'href="/effects/?status=verified&amp;subject=account-v-1"' in page


def test_htmx_request_gets_the_region_partial(operator_browser, unknown_effect):
    response = operator_browser.get("/effects/?status=all", HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert body.lstrip().startswith('<section id="effect-region"')
    assert "<html" not in body


@pytest.mark.parametrize("unknown", [1, 8])
def test_queue_query_count_does_not_grow_with_rows(
    operator_browser, mixed_effects, agent, django_assert_num_queries, unknown
):
    for index in range(unknown - 1):
        commit_effect(agent, f"u-extra-{index}", fault="timeout_after_commit")
    for tab in ("unknown", "postcondition_failed", "accepted", "verified", "rejected", "all"):
        with django_assert_num_queries(LIST_QUERIES):
            response = operator_browser.get(f"/effects/?status={tab}")
        assert response.status_code == 200
    with django_assert_num_queries(PARTIAL_QUERIES):
        operator_browser.get("/effects/?status=all", HTTP_HX_REQUEST="true")


# --- One effect -----------------------------------------------------------------------------


def test_detail_shows_fields_timeline_and_snapshot(auditor_browser, unknown_effect):
    page = auditor_browser.get("/effects/u-1/").content.decode()
    assert '<h1 class="mono mono-title">u-1</h1>' in page
    for text in (
        "release_collections_hold",
        "account-u-1",
        "collections_status",
        "released",
        "case-service",
        "servicing-team",
        "collections-agent",
    ):
        assert text in page, text
    assert f'href="/snapshots/{unknown_effect.snapshot.snapshot_id}/"' in page
    timeline = page[page.index('id="timeline"') :]
    steps = re.findall(r'<tr class="event-([a-z_]+)">', timeline)
    assert steps == ["recorded", "sent", "timeout"]
    evidence = unknown_effect.events.get(kind="timeout").evidence_id
    assert evidence and evidence in timeline
    assert "No receipt" in page
    assert '<span class="badge badge-amber">unknown</span>' in page


def test_detail_shows_the_receipt_and_readback(auditor_browser, mixed_effects):
    verified = mixed_effects["verified"]
    page = auditor_browser.get("/effects/v-1/").content.decode()
    assert verified.receipt["receipt_id"] in page
    steps = re.findall(r'<tr class="event-([a-z_]+)">', page)
    assert steps == ["recorded", "sent", "receipt", "readback"]
    assert '<span class="badge badge-green">verified</span>' in page
    assert 'data-polling="false"' in page


@pytest.mark.parametrize("key", ["u-1", "v-1"])
def test_detail_query_count_is_fixed(
    auditor_browser, mixed_effects, django_assert_num_queries, key
):
    with django_assert_num_queries(DETAIL_QUERIES):
        response = auditor_browser.get(f"/effects/{key}/")
    assert response.status_code == 200


def test_unknown_effect_is_404(operator_browser, estate):
    assert operator_browser.get("/effects/nothing/").status_code == 404
    assert operator_browser.get("/effects/nothing/status/").status_code == 404
    assert operator_browser.post("/effects/nothing/check/").status_code == 404


# --- Who may act --------------------------------------------------------------------------------


def test_operator_is_offered_the_three_actions(operator_browser, unknown_effect):
    page = operator_browser.get("/effects/u-1/").content.decode()
    assert 'hx-post="/effects/u-1/check/"' in page and "Run readback now" in page
    assert 'action="/effects/u-1/resolve/"' in page
    assert 'action="/effects/u-1/escalate/"' in page
    assert page.count('name="csrfmiddlewaretoken"') >= 3


@pytest.mark.parametrize("persona", ["auditor", "reviewer"])
def test_non_operators_see_no_actions_and_are_refused(request, unknown_effect, persona):
    client = signed_in(request.getfixturevalue(persona))
    page = client.get("/effects/u-1/").content.decode()
    for url in ("/check/", "/resolve/", "/escalate/"):
        assert url not in page
    assert "Run readback now" not in page
    assert client.post("/effects/u-1/check/").status_code == 403
    assert (
        client.post("/effects/u-1/resolve/", {"outcome": "succeeded", "reason": "x"}).status_code
        == 403
    )
    assert client.post("/effects/u-1/escalate/", {"reason": "x"}).status_code == 403
    unknown_effect.refresh_from_db()
    assert unknown_effect.status == "unknown"
    assert (
        not AuditEvent.objects.exclude(object_kind__in=["user", "principal"]).exists()
        and not Escalation.objects.exists()
    )


def test_settled_effects_offer_no_action(operator_browser, mixed_effects):
    page = operator_browser.get("/effects/v-1/").content.decode()
    assert "Run readback now" not in page and "/resolve/" not in page


def test_actions_enforce_csrf(operator, unknown_effect):
    client = signed_in(operator, enforce_csrf_checks=True)
    assert client.post("/effects/u-1/check/", HTTP_HX_REQUEST="true").status_code == 403
    assert (
        client.post("/effects/u-1/resolve/", {"outcome": "succeeded", "reason": "x"}).status_code
        == 403
    )
    assert not AuditEvent.objects.exclude(object_kind__in=["user", "principal"]).exists()


# --- Run readback now -------------------------------------------------------------------------


def test_run_readback_now_queues_the_check_and_the_panel_polls(
    operator_browser, operator, unknown_effect, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as queued:
        response = operator_browser.post(
            "/effects/u-1/check/", HTTP_HX_REQUEST="true", HTTP_X_REQUEST_ID="req-check-1"
        )
    assert response.status_code == 200
    assert len(queued) == 1  # the resolution task, enqueued once the transaction commits
    panel = response.content.decode().strip()
    assert panel.startswith('<section id="effect-status"')
    assert 'hx-trigger="every 2s"' in panel
    assert 'hx-get="/effects/u-1/status/?since=unknown.' in panel
    assert "Check queued" in panel and "Run readback now" not in panel
    assert response["HX-Trigger"] == "effect-changed"
    audit = AuditEvent.objects.get(action="effect.readback")
    assert (audit.actor, audit.object_ref, audit.request_id) == (
        operator.user,
        "u-1",
        "req-check-1",
    )

    # While no worker has answered, each poll asks again.
    poll_url = re.search(r'hx-get="([^"]+)"', panel).group(1).replace("&amp;", "&")
    again = operator_browser.get(poll_url, HTTP_HX_REQUEST="true")
    assert 'hx-trigger="every 2s"' in again.content.decode()
    assert "HX-Trigger" not in again


def test_readback_now_resolves_the_unknown_outcome_to_verified(
    operator_browser, unknown_effect, eager_tasks, django_capture_on_commit_callbacks
):
    # The queued work runs when the test's capture ends (as a worker would, after commit).
    with django_capture_on_commit_callbacks(execute=True):
        response = operator_browser.post("/effects/u-1/check/", HTTP_HX_REQUEST="true")
    panel = response.content.decode()
    # The owner's ledger had the key: accepted, then the readback verified it.
    unknown_effect.refresh_from_db()
    assert unknown_effect.status == "verified"
    steps = list(unknown_effect.events.values_list("kind", flat=True))
    assert steps == ["recorded", "sent", "timeout", "check_requested", "resolution", "readback"]
    # The panel's next poll shows it, and stops: verified is final.
    poll_url = re.search(r'hx-get="([^"]+)"', panel).group(1).replace("&amp;", "&")
    polled = operator_browser.get(poll_url, HTTP_HX_REQUEST="true")
    body = polled.content.decode()
    assert '<span class="badge badge-green">verified</span>' in body
    assert "hx-trigger" not in body
    assert polled["HX-Trigger"] == "effect-changed"


def test_polling_reports_the_change_and_stops_when_final(
    operator_browser, unknown_effect, django_capture_on_commit_callbacks
):
    from reconcile_app.services.effects import effect_resolve_unknown

    with django_capture_on_commit_callbacks():
        panel = operator_browser.post(
            "/effects/u-1/check/", HTTP_HX_REQUEST="true"
        ).content.decode()
    poll_url = re.search(r'hx-get="([^"]+)"', panel).group(1).replace("&amp;", "&")
    # The worker resolves it (the ledger has the key) and reads it back.
    read_back(effect_resolve_unknown(effect_id=unknown_effect.pk))
    response = operator_browser.get(poll_url, HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert '<span class="badge badge-green">verified</span>' in body
    assert "hx-trigger" not in body and 'data-polling="false"' in body
    assert response["HX-Trigger"] == "effect-changed"  # the page re-reads its timeline


def test_polling_gives_up_after_a_while(
    operator_browser, unknown_effect, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks():
        operator_browser.post("/effects/u-1/check/", HTTP_HX_REQUEST="true")
    body = operator_browser.get(f"/effects/u-1/status/?polls={MAX_POLLS}").content.decode()
    assert "hx-trigger" not in body
    assert "stopped refreshing" in body


def test_an_accepted_effect_polls_until_its_readback_lands(auditor_browser, mixed_effects):
    page = auditor_browser.get("/effects/a-1/").content.decode()
    assert 'data-polling="true"' in page and "Readback under way" in page
    read_back(mixed_effects["accepted"])
    body = auditor_browser.get("/effects/a-1/status/?since=accepted.0&polls=1").content.decode()
    assert 'data-polling="false"' in body and "verified" in body


def test_status_partial_query_count_is_fixed(
    operator_browser, unknown_effect, django_assert_num_queries
):
    with django_assert_num_queries(STATUS_QUERIES):
        response = operator_browser.get("/effects/u-1/status/?polls=3", HTTP_HX_REQUEST="true")
    assert response.status_code == 200


def test_readback_on_a_settled_effect_is_refused_in_the_panel(operator_browser, mixed_effects):
    response = operator_browser.post("/effects/v-1/check/", HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert "nothing_to_check" in body and 'role="alert"' in body
    assert "HX-Trigger" not in response


def test_readback_without_javascript_redirects_with_a_message(
    operator_browser, unknown_effect, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks():
        response = operator_browser.post("/effects/u-1/check/")
    assert response.status_code == 302 and response["Location"] == "/effects/u-1/"
    assert "Check queued for u-1." in operator_browser.get("/effects/u-1/").content.decode()


# --- Resolve manually, escalate ---------------------------------------------------------------


def test_manual_resolution_is_audited(operator_browser, operator, unknown_effect):
    response = operator_browser.post(
        "/effects/u-1/resolve/",
        {"outcome": "not_executed", "reason": "Owner confirmed by phone."},
        HTTP_X_REQUEST_ID="req-resolve-1",
    )
    assert response.status_code == 302 and response["Location"] == "/effects/u-1/"
    unknown_effect.refresh_from_db()
    assert unknown_effect.status == "not_executed"
    audit = AuditEvent.objects.get(action="effect.resolve")
    assert (audit.actor, audit.reason, audit.request_id) == (
        operator.user,
        "Owner confirmed by phone.",
        "req-resolve-1",
    )
    assert (audit.before, audit.after["status"]) == ({"status": "unknown"}, "not_executed")
    assert EvidenceEntry.objects.filter(
        note="manual resolution: Owner confirmed by phone."
    ).exists()
    page = operator_browser.get("/effects/u-1/").content.decode()
    assert "u-1 resolved by hand: not executed." in page
    assert '<tr class="event-manual_resolution">' in page and "olivia-operator" in page


@pytest.mark.parametrize(
    ("data", "code"),
    [
        ({"outcome": "succeeded", "reason": "  "}, "reason_required"),
        ({"outcome": "maybe", "reason": "no idea"}, "invalid_outcome"),
    ],
)
def test_manual_resolution_refusals_are_shown_inline(operator_browser, unknown_effect, data, code):
    response = operator_browser.post("/effects/u-1/resolve/", data)
    assert response.status_code == 400
    page = response.content.decode()
    form = page[
        page.index('id="resolve-form"') : page.index("</form>", page.index('id="resolve-form"'))
    ]
    assert code in form and 'role="alert"' in form
    unknown_effect.refresh_from_db()
    assert unknown_effect.status == "unknown"
    assert not AuditEvent.objects.exclude(object_kind__in=["user", "principal"]).exists()


def test_resolving_a_settled_effect_is_a_conflict(operator_browser, mixed_effects):
    response = operator_browser.post(
        "/effects/v-1/resolve/", {"outcome": "not_executed", "reason": "x"}
    )
    assert response.status_code == 409
    assert "not_resolvable" in response.content.decode()


def test_escalate_to_owner_opens_an_escalation(operator_browser, operator, unknown_effect):
    response = operator_browser.post(
        "/effects/u-1/escalate/", {"reason": "Ledger unreachable for an hour."}
    )
    assert response.status_code == 302
    escalation = Escalation.objects.get(effect=unknown_effect)
    assert (escalation.owner, escalation.code, escalation.requested_by) == (
        "servicing-team",
        "effect_unknown",
        operator.principal,
    )
    assert AuditEvent.objects.filter(action="effect.escalate", object_ref="u-1").exists()
    page = operator_browser.get("/effects/u-1/").content.decode()
    assert f"Escalated to servicing-team as {escalation.escalation_id}." in page
    assert f'href="/escalations/{escalation.escalation_id}/"' in page
    assert 'id="escalate-form"' not in page  # already with the owner
    # And it is in the reviewers' queue, linked back to the effect.
    queue = operator_browser.get("/escalations/").content.decode()
    assert escalation.escalation_id in queue and 'href="/effects/u-1/"' in queue


def test_escalation_needs_a_reason(operator_browser, unknown_effect):
    response = operator_browser.post("/effects/u-1/escalate/", {"reason": ""})
    assert response.status_code == 400
    assert "reason_required" in response.content.decode()
    assert not Escalation.objects.exists()


def test_anonymous_actions_are_sent_to_login(unknown_effect):
    response = Client().post("/effects/u-1/resolve/", {"outcome": "succeeded", "reason": "x"})
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
