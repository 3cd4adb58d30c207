"""The contradictions triage page and the operator's resolve action."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client

from reconcile_app.models import AuditEvent, Contradiction
from tests.reconcile_app.console.conftest import SETUP_KINDS, signed_in

# session, user, the user's groups, the tab counts, the paginator's count, the page of rows.
# (+1: the live watermark, rows matching and the newest id: reconcile_app/console/live.py)
LIST_QUERIES = 7


@pytest.fixture
def contradiction(make_snapshot) -> Contradiction:
    make_snapshot(claimed="collect")
    return Contradiction.objects.get()


def resolve(client: Client, row: Contradiction, note: str, **headers: Any):
    return client.post(f"/contradictions/{row.pk}/resolve/", {"note": note}, **headers)


def test_list_shows_both_sides_and_links_the_snapshot(operator_browser, contradiction):
    page = operator_browser.get("/contradictions/").content.decode()
    assert f'id="contradiction-{contradiction.pk}"' in page
    assert '<span class="value">hold</span>' in page
    assert "case-service" in page and "case-service@42" in page
    assert '<span class="value">collect</span>' in page
    assert "memory:episodic" in page
    assert f'href="/snapshots/{contradiction.snapshot.snapshot_id}/"' in page


def test_the_kind_filter_names_kinds_as_the_rows_do(operator_browser, contradiction):
    """Not Django's title-cased default labels ("Memory Vs State") beside rows saying
    "memory vs state"; the values stay the API's."""
    page = operator_browser.get("/contradictions/").content.decode()
    assert '<span class="tag">memory vs state</span>' in page
    assert '<option value="memory_vs_state">memory vs state</option>' in page
    assert '<option value="evidence_vs_state">evidence vs state</option>' in page
    assert "Vs State" not in page


def test_status_tabs_count_and_filter(operator_browser, make_snapshot, operator):
    make_snapshot(subject="account-17", claimed="collect")
    make_snapshot(subject="account-18", claimed="collect")
    first = Contradiction.objects.get(subject="account-17")
    resolve(operator_browser, first, "Owner confirmed the hold.")

    open_tab = operator_browser.get("/contradictions/").content.decode()
    assert re.search(r'class="tab active">Open <span class="tab-count">1</span>', open_tab)
    assert 'Resolved <span class="tab-count">1</span>' in open_tab
    assert 'All <span class="tab-count">2</span>' in open_tab
    assert "account-18" in open_tab and "account-17" not in open_tab

    resolved_tab = operator_browser.get("/contradictions/?status=resolved").content.decode()
    assert "account-17" in resolved_tab and "account-18" not in resolved_tab
    assert "Owner confirmed the hold." in resolved_tab

    all_tab = operator_browser.get("/contradictions/?status=all").content.decode()
    assert "account-17" in all_tab and "account-18" in all_tab


def test_filters_narrow_rows_and_tab_counts(operator_browser, make_snapshot):
    make_snapshot(subject="account-17", claimed="collect")
    make_snapshot(subject="account-18", claimed="collect")
    page = operator_browser.get("/contradictions/?subject=account-18").content.decode()
    assert "account-18" in page and "account-17" not in page
    assert 'Open <span class="tab-count">1</span>' in page
    # Tabs keep the filters.
    assert 'href="/contradictions/?status=resolved&amp;subject=account-18"' in page
    for query, expected in [
        ("field=collections_status", 2),
        ("field=complaint_status", 0),
        ("kind=memory_vs_state", 2),
        ("kind=evidence_vs_state", 0),
    ]:
        page = operator_browser.get(f"/contradictions/?status=all&{query}").content.decode()
        assert len(re.findall(r'id="contradiction-\d+"', page)) == expected, query


def test_htmx_request_gets_the_region_partial(operator_browser, contradiction):
    response = operator_browser.get("/contradictions/?status=all", HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert body.lstrip().startswith('<section id="contradiction-region"')
    assert "<html" not in body


def test_operator_is_offered_the_resolve_form(operator_browser, contradiction):
    page = operator_browser.get("/contradictions/").content.decode()
    assert f'hx-post="/contradictions/{contradiction.pk}/resolve/"' in page
    assert 'name="csrfmiddlewaretoken"' in page


@pytest.mark.parametrize("persona", ["auditor", "reviewer"])
def test_non_operators_get_no_form_and_are_refused(request, contradiction, persona):
    client = signed_in(request.getfixturevalue(persona))
    page = client.get("/contradictions/").content.decode()
    assert f'id="contradiction-{contradiction.pk}"' in page
    assert "/resolve/" not in page
    response = resolve(client, contradiction, "I should not be able to do this.")
    assert response.status_code == 403
    contradiction.refresh_from_db()
    assert contradiction.status == "open"
    assert not AuditEvent.objects.exclude(object_kind__in=SETUP_KINDS).exists()


def test_anonymous_resolve_is_sent_to_login(contradiction):
    response = resolve(Client(), contradiction, "anonymous")
    assert response.status_code == 302
    contradiction.refresh_from_db()
    assert contradiction.status == "open"


def test_operator_resolves_through_htmx_and_it_is_audited(
    operator_browser, operator, contradiction
):
    response = resolve(
        operator_browser,
        contradiction,
        "Owner confirmed the hold; memory is outdated.",
        HTTP_HX_REQUEST="true",
        HTTP_X_REQUEST_ID="req-123",
    )
    assert response.status_code == 200
    row = response.content.decode().strip()
    assert row.startswith(f'<tr id="contradiction-{contradiction.pk}"')
    assert row.endswith("</tr>")
    assert '<span class="badge badge-green">resolved</span>' in row
    assert "Owner confirmed the hold; memory is outdated." in row
    assert "/resolve/" not in row
    # The page refreshes its tab counts on this event.
    assert "contradiction-resolved" in json.loads(response["HX-Trigger"])

    contradiction.refresh_from_db()
    assert contradiction.status == "resolved"
    assert contradiction.resolved_by == operator.user
    event = AuditEvent.objects.get(action="contradiction.resolve")
    assert event.actor == operator.user
    assert event.object_ref == str(contradiction.pk)
    assert event.reason == "Owner confirmed the hold; memory is outdated."
    assert event.request_id == "req-123"
    assert event.before == {"status": "open"} and event.after == {"status": "resolved"}


def test_console_resolve_gets_a_request_id_when_the_browser_sends_none(
    operator_browser, contradiction
):
    resolve(operator_browser, contradiction, "noted", HTTP_HX_REQUEST="true")
    assert len(AuditEvent.objects.get(action="contradiction.resolve").request_id) == 32


def test_note_is_required(operator_browser, contradiction):
    response = resolve(operator_browser, contradiction, "   ", HTTP_HX_REQUEST="true")
    row = response.content.decode()
    assert response.status_code == 200
    assert "A note is required" in row
    assert 'aria-invalid="true"' in row
    contradiction.refresh_from_db()
    assert contradiction.status == "open"
    assert not AuditEvent.objects.exclude(object_kind__in=SETUP_KINDS).exists()


def test_a_note_as_long_as_a_bulk_reason_is_kept_whole(operator_browser, contradiction):
    note = "The owner's ledger, line by line: " + "x" * 3900
    response = resolve(operator_browser, contradiction, note, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert AuditEvent.objects.get(action="contradiction.resolve").reason == note


def test_resolving_twice_reports_it_without_a_second_audit(operator_browser, contradiction):
    resolve(operator_browser, contradiction, "first", HTTP_HX_REQUEST="true")
    response = resolve(operator_browser, contradiction, "second", HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert "first" in response.content.decode()
    assert AuditEvent.objects.exclude(object_kind__in=SETUP_KINDS).count() == 1


def test_plain_form_post_redirects_back_with_a_message(operator_browser, contradiction):
    response = resolve(operator_browser, contradiction, "Resolved without JavaScript.")
    assert response.status_code == 302
    assert response["Location"] == "/contradictions/"
    page = operator_browser.get("/contradictions/?status=resolved").content.decode()
    assert f"Contradiction {contradiction.pk} resolved." in page


@pytest.mark.parametrize("note", ["   ", "Resolved without JavaScript."])
def test_plain_form_post_goes_back_to_the_list_as_the_operator_left_it(
    operator_browser, make_snapshot, note
):
    """Refused (a blank note) or not, the list comes back with its tab, filters and page:
    it came back bare, and an operator working down a filtered page started over."""
    for index in range(3):
        make_snapshot(subject=f"account-{index}", claimed="collect")
    row = Contradiction.objects.order_by("pk").first()
    left = "/contradictions/?status=open&subject=account&per_page=2&page=2"
    response = resolve(operator_browser, row, note, HTTP_REFERER=f"http://testserver{left}")
    assert (response.status_code, response["Location"]) == (302, left)
    said = "A note is required" if note.isspace() else f"Contradiction {row.pk} resolved."
    assert said in operator_browser.get(left).content.decode()


@pytest.mark.parametrize(
    "referer",
    ["http://elsewhere.example/contradictions/?page=2", "http://testserver/effects/?page=2", ""],
)
def test_plain_form_post_goes_back_only_to_this_list(operator_browser, contradiction, referer):
    headers = {"HTTP_REFERER": referer} if referer else {}
    response = resolve(operator_browser, contradiction, "noted", **headers)
    assert response["Location"] == "/contradictions/"


def test_unknown_contradiction_is_404(operator_browser, estate):
    response = operator_browser.post("/contradictions/999/resolve/", {"note": "x"})
    assert response.status_code == 404


def test_resolve_enforces_csrf(operator, contradiction):
    client = signed_in(operator, enforce_csrf_checks=True)
    refused = resolve(client, contradiction, "forged", HTTP_HX_REQUEST="true")
    assert refused.status_code == 403
    contradiction.refresh_from_db()
    assert contradiction.status == "open"

    # The page hands out the token; the htmx header (from <body hx-headers>) carries it.
    page = client.get("/contradictions/").content.decode()
    token = re.search(r'"X-CSRFToken": "([^"]+)"', page).group(1)
    accepted = resolve(
        client, contradiction, "genuine", HTTP_HX_REQUEST="true", HTTP_X_CSRFTOKEN=token
    )
    assert accepted.status_code == 200
    contradiction.refresh_from_db()
    assert contradiction.status == "resolved"


# One resolved row plus one, or thirty, open ones: every tab has rows to render.
@pytest.mark.parametrize("count", [2, 31])
def test_list_query_count_does_not_grow_with_rows(
    operator_browser, make_snapshot, django_assert_num_queries, operator, count
):
    for index in range(count):
        make_snapshot(subject=f"account-{index}", claimed="collect")
    # A resolved row too, so the resolver's join is exercised.
    resolve(operator_browser, Contradiction.objects.order_by("pk").first(), "done")
    for tab in ("open", "resolved", "all"):
        with django_assert_num_queries(LIST_QUERIES):
            response = operator_browser.get(f"/contradictions/?status={tab}")
        assert response.status_code == 200


def test_a_resolve_through_htmx_is_announced_to_a_screen_reader(operator_browser, contradiction):
    """The row is swapped whole, taking the focused Resolve button with it, and the answer
    said nothing a screen reader would read: the page's messages (a polite live region) now
    say it, as the quarantine dialog's answers do."""
    response = resolve(operator_browser, contradiction, "Owner confirmed.", HTTP_HX_REQUEST="true")
    trigger = json.loads(response["HX-Trigger"])
    assert trigger["console-message"] == {
        "level": "success",
        "text": f"Contradiction {contradiction.pk} resolved.",
    }
    # A second operator's stale form: the row now shows the first one's note, with no form
    # to hold the refusal, which was said nowhere.
    refused = resolve(operator_browser, contradiction, "Again.", HTTP_HX_REQUEST="true")
    assert "Owner confirmed." in refused.content.decode()
    assert json.loads(refused["HX-Trigger"])["console-message"] == {
        "level": "error",
        "text": f"Not resolved by you: contradiction {contradiction.pk} is already resolved.",
    }
