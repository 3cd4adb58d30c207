"""A person's "it did not happen" waits for the owner's execution bound, as the worker's does.

Recorded `not_executed` while the owner may still run the command, the agent decides and
commits again under a new key, and the owner can then run both. The console only warned;
the API and bulk jobs recorded it. Now it is refused (409 `owner_may_still_execute`, with
until when) unless the operator says the owner confirmed it will never run.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from reconcile_app.models import AuditEvent, BulkJobItem, Effect, EffectEvent, EvidenceEntry
from tests.reconcile_app.api.test_bulk import REASON, unknowns  # noqa: F401
from tests.reconcile_app.console.conftest import operator_browser, unknown_effect  # noqa: F401

BOUND = 600


def bound_published(effect: Effect, seconds: int = BOUND) -> None:
    source = effect.source
    source.options = {**source.options, "execution_bound_seconds": seconds}
    source.save(update_fields=["options"])


def resolve(client: Any, key: str, outcome: str = "not_executed", **more: Any) -> Any:
    body = {"outcome": outcome, "reason": "not in the owner's ledger", **more}
    return client.post(f"/api/v1/effects/{key}/resolve", body)


def test_not_executed_within_the_bound_is_refused_and_writes_nothing(unknown_effect, operator):
    bound_published(unknown_effect)
    evidence, events = EvidenceEntry.objects.count(), EffectEvent.objects.count()

    refused = resolve(operator, "u-1")

    assert refused.status_code == 409, refused.content
    problem = refused.json()
    assert problem["code"] == "owner_may_still_execute"
    until = unknown_effect.sent_at + timedelta(seconds=BOUND)
    assert problem["may_still_execute_until"] == until.isoformat().replace("+00:00", "Z")
    assert 0 < int(refused["Retry-After"]) <= BOUND
    assert Effect.objects.get(pk=unknown_effect.pk).status == "unknown"
    assert (EvidenceEntry.objects.count(), EffectEvent.objects.count()) == (evidence, events)
    assert not AuditEvent.objects.filter(action="effect.resolve").exists()


def test_the_owners_confirmation_settles_it_at_once_and_is_audited(unknown_effect, operator):
    bound_published(unknown_effect)

    resolved = resolve(operator, "u-1", confirmed_by_owner=True)

    assert resolved.status_code == 200, resolved.content
    assert resolved.json()["status"] == "not_executed"
    audit = AuditEvent.objects.get(action="effect.resolve")
    assert audit.after == {
        "status": "not_executed",
        "outcome": "not_executed",
        "confirmed_by_owner": True,
    }
    event = EffectEvent.objects.get(effect=unknown_effect, kind="manual_resolution")
    assert event.detail["confirmed_by_owner"] is True


@pytest.mark.parametrize("outcome", ["succeeded", "not_executed"])
def test_past_the_bound_or_for_succeeded_nothing_waits(unknown_effect, operator, outcome):
    bound_published(unknown_effect)
    if outcome == "not_executed":
        Effect.objects.filter(pk=unknown_effect.pk).update(
            sent_at=timezone.now() - timedelta(seconds=BOUND + 1)
        )

    resolved = resolve(operator, "u-1", outcome)

    assert resolved.status_code == 200, resolved.content
    assert resolved.json()["status"] == {"succeeded": "accepted"}.get(outcome, outcome)
    assert "confirmed_by_owner" not in AuditEvent.objects.get(action="effect.resolve").after


def test_a_bulk_resolution_skips_what_the_owner_may_still_run(
    unknowns,
    operator,
    eager_tasks,
    django_capture_on_commit_callbacks,
):
    bound_published(Effect.objects.get(idempotency_key=unknowns[0]))
    with django_capture_on_commit_callbacks(execute=True):
        started = operator.post(
            "/api/v1/effects/bulk",
            {"keys": unknowns, "action": "resolve", "outcome": "not_executed", "reason": REASON},
        )
    assert started.status_code == 202, started.content

    job = operator.get(f"/api/v1/jobs/{started.json()['job_id']}").json()

    assert (job["status"], job["skipped"], job["failed"]) == ("done", 3, 0)
    assert set(Effect.objects.values_list("status", flat=True)) == {"unknown"}
    details = BulkJobItem.objects.values_list("state", "detail")
    assert len(details) == 3
    assert all(state == "skipped" and "may still run it until" in said for state, said in details)


def test_the_console_form_offers_the_owners_confirmation_within_the_bound(
    unknown_effect,
    operator_browser,
):
    bound_published(unknown_effect)
    page = operator_browser.get("/effects/u-1/").content.decode()
    assert 'name="confirmed_by_owner"' in page
    form = {"outcome": "not_executed", "reason": "owner's on-call: never received"}

    refused = operator_browser.post("/effects/u-1/resolve/", form)

    assert refused.status_code == 409
    assert "owner_may_still_execute" in refused.content.decode()
    assert Effect.objects.get(pk=unknown_effect.pk).status == "unknown"
    confirmed = operator_browser.post("/effects/u-1/resolve/", {**form, "confirmed_by_owner": "1"})
    assert confirmed.status_code == 302
    assert Effect.objects.get(pk=unknown_effect.pk).status == "not_executed"


def test_past_the_bound_the_console_form_asks_for_no_confirmation(
    unknown_effect,
    operator_browser,
):
    bound_published(unknown_effect, 0)

    assert 'name="confirmed_by_owner"' not in operator_browser.get("/effects/u-1/").content.decode()
