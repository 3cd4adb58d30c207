"""The operators' levers on an effect: run a readback now, resolve by hand, escalate."""

from __future__ import annotations

import json
import re

import pytest
from celery.app.task import Task
from django.test import Client

from reconcile_app.console.mixins import MAX_POLLS
from reconcile_app.models import AuditEvent, Effect, Escalation, EvidenceEntry
from reconcile_app.services.effects import (
    OwnerUnavailable,
    effect_readback,
    effect_resolve_unknown,
)
from reconcile_app.services.quarantine import quarantine_create
from sandbox_app.services import sandbox_fault_add
from tests.reconcile_app.console.conftest import SETUP_KINDS, read_back
from tests.reconcile_app.console.effects_world import mixed_effects  # noqa: F401 (a fixture)

# session, user, the user's groups, the effect, its latest step.
STATUS_QUERIES = 5


# --- Run readback now -------------------------------------------------------------------------


def test_run_readback_now_queues_the_check_and_the_panel_polls(
    operator_browser, operator, unknown_effect, monkeypatch
):
    sent: list[str] = []
    monkeypatch.setattr(Task, "apply_async", lambda task, *args, **kwargs: sent.append(task.name))
    response = operator_browser.post(
        "/effects/u-1/check/", HTTP_HX_REQUEST="true", HTTP_X_REQUEST_ID="req-check-1"
    )
    assert response.status_code == 200
    # The resolution, sent with the request (services/enqueue.py: enqueue_or_refuse).
    assert sent == ["reconcile_app.tasks.effect_resolve_task"]
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
    assert "effect-changed" in json.loads(polled["HX-Trigger"])


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
    # The page re-reads its timeline, and says the move in its live region: the panel itself
    # is swapped whole, and a live region swapped in with its text is not announced.
    fired = json.loads(response["HX-Trigger"])
    assert set(fired) == {"effect-changed", "console-message"}
    assert fired["console-message"]["text"].startswith("u-1 is verified.")
    assert "aria-live" not in body


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
    assert not AuditEvent.objects.exclude(object_kind__in=SETUP_KINDS).exists()


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
    # Nothing is frozen by asking the owner (the page said "Writes: frozen"): it shows where
    # the effect stands.
    detail = operator_browser.get(f"/escalations/{escalation.escalation_id}/").content.decode()
    assert re.search(r'id="effect-badge"><span class="label">Effect</span>.*?unknown', detail)
    assert ">frozen<" not in detail


def test_escalation_needs_a_reason(operator_browser, unknown_effect):
    response = operator_browser.post("/effects/u-1/escalate/", {"reason": ""})
    assert response.status_code == 400
    assert "reason_required" in response.content.decode()
    assert not Escalation.objects.exists()


def test_anonymous_actions_are_sent_to_login(unknown_effect):
    response = Client().post("/effects/u-1/resolve/", {"outcome": "succeeded", "reason": "x"})
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


@pytest.mark.parametrize(
    "key, held_by, says",
    [
        ("u-1", "quarantine", "case-service is quarantined; resolution held"),
        ("a-1", "quarantine", "case-service is quarantined; readback held"),
        ("a-1", "outage", "case-service: owner unavailable"),
    ],
)
def test_a_requested_check_the_worker_could_not_conclude_says_why_and_stops_polling(
    operator_browser, operator, mixed_effects, monkeypatch, key, held_by, says
):
    """The worker's answer to a check it cannot conclude (the source quarantined, the owner
    down for a readback) is a note on the effect, no timeline event: the panel went on
    saying "Check queued — waiting for the worker" for three minutes, then "Still waiting
    for a worker", and never said why nothing moved."""
    if held_by == "quarantine":
        quarantine_create(scope="source", target="case-service", reason="flapping", actor=operator)
    else:
        sandbox_fault_add(source="case-service", kind="unavailable")
    monkeypatch.setattr(Task, "apply_async", lambda task, *args, **kwargs: None)
    operator_browser.post(f"/effects/{key}/check/", HTTP_HX_REQUEST="true")
    # What the worker does with the check it was sent.
    effect = Effect.objects.get(idempotency_key=key)
    if effect.status == "unknown":
        effect_resolve_unknown(effect_id=effect.pk)
    else:
        with pytest.raises(OwnerUnavailable):
            effect_readback(effect_id=effect.pk)

    panel = operator_browser.get(f"/effects/{key}/status/?polls=1", HTTP_HX_REQUEST="true")
    panel = panel.content.decode()
    assert 'id="check-stuck"' in panel and says in panel
    assert "Check queued" not in panel and "Still waiting for a worker" not in panel
    if key == "u-1":
        assert "hx-trigger" not in panel  # nothing under way: no polling
    # (An accepted effect's panel follows its automatic readback, retried with backoff.)
    assert 'id="run-readback"' in panel  # and the operator may ask again
