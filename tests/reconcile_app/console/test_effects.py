"""The unknown-outcome queue and one effect's timeline."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from reconcile_app.models import AuditEvent, Effect, Escalation
from reconcile_app.selectors.effects import effect_source_names
from tests.reconcile_app.console.conftest import SETUP_KINDS, commit_effect, signed_in
from tests.reconcile_app.console.effects_world import mixed_effects  # noqa: F401 (a fixture)

# session, user, the user's groups, the tab counts, the paginator's count, the page of rows,
# and the filter form's source suggestions.
# (+1: the live watermark, rows matching and the newest id: reconcile_app/console/live.py)
LIST_QUERIES = 8
PARTIAL_QUERIES = 7  # the suggestions sit outside the swapped region
# session, user, the user's groups, the effect (with source, snapshot id, principal,
# decision), its timeline, its escalations, its audit timeline.
DETAIL_QUERIES = 7
# session, user, the user's groups, the effect, its latest step.
STATUS_QUERIES = 5


def keys(page: str) -> list[str]:
    return re.findall(r'<a class="mono" href="/effects/([^"/]+)/">', page)


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
        not AuditEvent.objects.exclude(object_kind__in=SETUP_KINDS).exists()
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
    assert not AuditEvent.objects.exclude(object_kind__in=SETUP_KINDS).exists()


def test_source_suggestions_ask_each_source_not_every_effect(mixed_effects):
    sent_to = {effect.source.name for effect in mixed_effects.values()}
    with CaptureQueriesContext(connection) as queries:
        names = effect_source_names()
    assert names == sorted(sent_to)
    # SELECT DISTINCT over the effects read all 100k of a year's effects (223 ms) on every
    # load of the effects page; each source's EXISTS probe is an index lookup.
    (sql,) = [query["sql"] for query in queries.captured_queries]
    assert "DISTINCT" not in sql
    assert 'FROM "reconcile_app_source"' in sql
    assert "EXISTS" in sql
