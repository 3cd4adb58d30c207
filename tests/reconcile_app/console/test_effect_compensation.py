"""The effect page's "Compensate" form: through the gate, in the operator's name, linked."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from reconcile_app.models import AuditEvent, Effect
from reconcile_app.services.evidence import evidence_append
from sandbox_app.models import SandboxRecord
from sandbox_app.services import sandbox_record_write
from tests.reconcile_app.console.conftest import SETUP_KINDS, commit_effect, read_back, signed_in

# session, user, the user's groups, the effect (with its links), its timeline, its
# escalations, its audit timeline — the same with or without compensations.
DETAIL_QUERIES = 7
FORM = {
    "action": "retain_manual_review",
    "resulting_value": "manual_review",
    "reason": "released in error: manual review was agreed",
}


def owner_says(subject: str, value: str) -> None:
    """The ledger evidences the owner's current value (the contract requires evidence)."""
    evidence_append(
        kind="observation",
        subject=subject,
        field="collections_status",
        value=value,
        source="case-ledger",
        observed_at=timezone.now(),
    )


@pytest.fixture
def verified(estate, agent) -> Effect:
    effect = read_back(commit_effect(agent, "v-1"))
    assert effect.status == "verified"
    owner_says("account-v-1", "released")
    return effect


def owner_record(subject: str = "account-v-1") -> tuple[Any, int]:
    record = SandboxRecord.objects.get(
        source="case-service", subject=subject, field="collections_status"
    )
    return record.value, record.version


def test_operator_is_offered_the_compensate_form(operator_browser, verified):
    page = operator_browser.get("/effects/v-1/").content.decode()
    form = page[page.index('action="/effects/v-1/compensate/"') :]
    form = form[: form.index("</form>")]
    assert 'id="compensate-form"' in form
    assert 'name="csrfmiddlewaretoken"' in form
    assert '<option value="retain_manual_review"' in form
    assert '<option value="release_collections_hold"' in form


@pytest.mark.parametrize("persona", ["auditor", "reviewer"])
def test_others_see_no_form_and_are_refused(request, verified, persona):
    client = signed_in(request.getfixturevalue(persona))
    assert "/compensate/" not in client.get("/effects/v-1/").content.decode()
    assert client.post("/effects/v-1/compensate/", FORM).status_code == 403
    assert not Effect.objects.filter(compensates=verified).exists()
    assert not AuditEvent.objects.exclude(object_kind__in=SETUP_KINDS).exists()


def test_compensating_redirects_to_the_new_effect_and_links_both_ways(
    operator_browser, operator, verified
):
    response = operator_browser.post("/effects/v-1/compensate/", FORM)
    compensation = Effect.objects.get(compensates=verified)
    assert response.status_code == 302
    assert response["Location"] == f"/effects/{compensation.idempotency_key}/"
    assert compensation.principal == operator.principal
    assert compensation.status == "accepted"
    assert owner_record() == ("manual_review", 44)
    page = operator_browser.get(response["Location"]).content.decode()
    assert "committed through the gate for v-1" in page  # the message, once
    linked = page[page.index('id="compensates"') :]
    assert linked.startswith('id="compensates"><a class="mono" href="/effects/v-1/">v-1</a>')
    original = operator_browser.get("/effects/v-1/").content.decode()
    back = original[original.index('id="compensated-by"') :]
    key = compensation.idempotency_key
    assert back.startswith(f'id="compensated-by"><a class="mono" href="/effects/{key}/">{key}</a>')
    # The timelines link the two as well.
    steps = page[page.index('id="timeline"') :]
    assert '<span class="muted">compensates</span> <a class="mono" href="/effects/v-1/">' in steps
    steps = original[original.index('id="timeline"') :]
    assert f'compensated by</span> <a class="mono" href="/effects/{key}/">' in steps
    # Compensated: the form is gone; the reason is on the page's audit timeline.
    assert 'id="compensate-form"' not in original
    assert FORM["reason"] in original


# A browser posting the form from the effect's page names it (Referrer-Policy same-origin).
FROM_THE_PAGE = "http://testserver/effects/v-1/"


def test_a_refusal_is_shown_after_a_redirect_and_never_re_posted(operator_browser, verified):
    sandbox_record_write(
        source="case-service", subject="account-v-1", field="collections_status", value="hold"
    )
    owner_says("account-v-1", "hold")
    response = operator_browser.post("/effects/v-1/compensate/", FORM, HTTP_REFERER=FROM_THE_PAGE)
    assert response.status_code == 303 and response["Location"] == "/effects/v-1/"
    page = operator_browser.get("/effects/v-1/").content.decode()
    error = page[page.index('id="compensate-error"') :]
    assert "decision_not_allowed" in error[:400]
    # What was typed is kept beside the refusal.
    assert FORM["reason"] in page and 'value="manual_review"' in page
    # A reload is a GET: nothing is posted again and the refusal has been shown once.
    again = operator_browser.get("/effects/v-1/").content.decode()
    assert 'id="compensate-error"' not in again
    assert not Effect.objects.filter(compensates=verified).exists()
    assert owner_record() == ("hold", 44)


def test_a_missing_reason_is_refused_inline(operator_browser, verified):
    response = operator_browser.post(
        "/effects/v-1/compensate/", {**FORM, "reason": " "}, HTTP_REFERER=FROM_THE_PAGE
    )
    assert response.status_code == 303 and response["Location"] == "/effects/v-1/"
    page = operator_browser.get("/effects/v-1/").content.decode()
    error = page[page.index('id="compensate-error"') :]
    assert "invalid_request" in error[:300]
    assert not Effect.objects.filter(compensates=verified).exists()


def test_a_value_no_store_keeps_is_refused_inline(operator_browser, verified):
    """`"\\ud800"` decodes to a lone surrogate, which failed at the write with a 500."""
    response = operator_browser.post(
        "/effects/v-1/compensate/",
        {**FORM, "resulting_value": '"\\ud800"'},
        HTTP_REFERER=FROM_THE_PAGE,
    )
    assert response.status_code == 303 and response["Location"] == "/effects/v-1/"
    page = operator_browser.get("/effects/v-1/").content.decode()
    error = page[page.index('id="compensate-error"') :]
    assert "lone surrogate" in error[:400]
    assert not Effect.objects.filter(compensates=verified).exists()


def test_compensation_enforces_csrf(operator, verified):
    client = signed_in(operator, enforce_csrf_checks=True)
    assert client.post("/effects/v-1/compensate/", FORM).status_code == 403
    assert not Effect.objects.filter(compensates=verified).exists()


def test_unknown_effect_cannot_be_compensated(operator_browser, estate):
    assert operator_browser.post("/effects/nothing/compensate/", FORM).status_code == 404


def test_detail_query_count_is_fixed_with_links(
    operator_browser, auditor_browser, verified, django_assert_num_queries
):
    operator_browser.post("/effects/v-1/compensate/", FORM)
    key = Effect.objects.get(compensates=verified).idempotency_key
    for page in ("v-1", key):
        with django_assert_num_queries(DETAIL_QUERIES):
            assert auditor_browser.get(f"/effects/{page}/").status_code == 200
