"""An unknown outcome's timeline step says what the owner did: "no answer" was shown for an
owner that answered a 502, a 409 or a receipt for another request, which is the first thing
an operator triaging it asks."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from reconcile_app.models import Effect, EffectEvent
from tests.reconcile_app.console.test_effect_truthful import section


@pytest.mark.parametrize(
    ("detail", "label"),
    [
        ({"code": "timeout", "detail": "ReadTimeout"}, "No answer (outcome unknown)"),
        ({"code": "timeout", "detail": "owner answered 502"}, "Answered with an error"),
        ({"code": "refusal_unproven", "detail": "owner answered 409"}, "Refused without proof"),
        ({"code": "receipt_mismatch", "detail": "for k-2"}, "Answered without a receipt for it"),
        ({"code": "sender_lost"}, "Sender lost mid-request"),
    ],
    ids=["no-answer", "5xx", "409", "another-receipt", "sender-lost"],
)
def test_an_unknown_outcomes_step_says_what_the_owner_did(
    operator_browser, unknown_effect, detail, label
):
    EffectEvent.objects.create(
        effect=unknown_effect, at=timezone.now(), kind="timeout", detail=detail
    )

    page = operator_browser.get("/effects/u-1/").content.decode()

    # The effect's own timeout (no answer) comes first; the step added here is the last row.
    last_row = section(page, 'id="timeline"', "</table>").rsplit("<tr", 1)[-1]
    assert label in last_row


def test_the_resolve_form_says_when_the_owner_may_still_run_it(operator_browser, unknown_effect):
    """Within its owner's execution bound, "it did not happen" is not yet shown by anything:
    the operator settling it by hand is told until when."""
    assert "execution-bound-note" not in operator_browser.get("/effects/u-1/").content.decode()
    source = unknown_effect.source
    source.options = {**source.options, "execution_bound_seconds": 600}
    source.save(update_fields=["options"])

    page = operator_browser.get("/effects/u-1/").content.decode()

    note = section(page, 'id="execution-bound-note"', "</p>")
    assert "may still run it until" in note
    Effect.objects.filter(pk=unknown_effect.pk).update(
        sent_at=timezone.now() - timedelta(seconds=601)
    )
    assert "execution-bound-note" not in operator_browser.get("/effects/u-1/").content.decode()


@pytest.mark.parametrize(
    ("code", "label"),
    [
        ("owner_unavailable", "Not delivered: the owner could not be reached"),
        ("not_sent", "Never sent: the request ended before the command left"),
        ("version_changed", "Refused by the owner"),
    ],
)
def test_a_rejection_the_owner_never_saw_is_not_called_its_refusal(
    operator_browser, unknown_effect, code, label
):
    EffectEvent.objects.create(
        effect=unknown_effect, at=timezone.now(), kind="rejected", detail={"code": code}
    )

    page = operator_browser.get("/effects/u-1/").content.decode()

    last_row = section(page, 'id="timeline"', "</table>").rsplit("<tr", 1)[-1]
    assert label in last_row


@pytest.mark.parametrize("code", ["owner_unavailable", "not_sent"])
def test_an_effect_that_never_reached_its_owner_does_not_say_the_owner_refused_it(
    operator_browser, unknown_effect, code
):
    Effect.objects.filter(pk=unknown_effect.pk).update(status="rejected", outcome={"code": code})

    page = operator_browser.get("/effects/u-1/").content.decode()

    says = section(page, 'id="status-says"', "</span>")
    assert "Never reached the owner" in says and "refused" not in says
