"""The effect page says only what is true, as an operator trying it would find it."""

from __future__ import annotations

import html
import re

import pytest
from django.utils import timezone

from reconcile_app.models import Effect, EffectEvent
from reconcile_app.services.audit import audit_record
from reconcile_app.services.effects import OwnerUnavailable, effect_readback
from sandbox_app.services import sandbox_fault_add, sandbox_faults_clear
from tests.reconcile_app.console.conftest import commit_effect, read_back
from tests.reconcile_app.console.effects_world import mixed_effects  # noqa: F401 (a fixture)


def section(page: str, marker: str, end: str = "</section>") -> str:
    start = page.index(marker)
    return html.unescape(page[start : page.index(end, start)])


# --- An operator's word is not a receipt ----------------------------------------------------


def test_manual_it_happened_never_claims_a_receipt(operator_browser, unknown_effect):
    response = operator_browser.post(
        "/effects/u-1/resolve/", {"outcome": "succeeded", "reason": "seen in the owner's UI"}
    )
    assert response.status_code == 302
    page = operator_browser.get("/effects/u-1/").content.decode()
    says = section(page, 'id="status-says"', "</span>")
    assert "accepted on an operator's word, awaiting readback" in says.lower()
    assert "receipt" not in says.lower().replace("returned no receipt", "")
    assert "The owner returned a receipt" not in page
    # If-Match + 1, from no receipt: marked as assumed.
    version = section(page, 'id="result-version"', "</dd>")
    assert "43" in version and "assumed" in version
    assert "operator's word" in section(page, 'id="no-receipt"', "</p>")


def test_a_receipt_is_not_marked_assumed(auditor_browser, mixed_effects):
    page = auditor_browser.get("/effects/a-1/").content.decode()
    assert "The owner returned a receipt" in page
    assert "assumed" not in section(page, 'id="result-version"', "</dd>")


def test_the_resolve_form_says_it_happened_is_read_back(operator_browser, unknown_effect):
    page = operator_browser.get("/effects/u-1/").content.decode()
    form = section(page, 'id="resolve-form"', "</form>")
    assert "→ verified" not in form and "read back to verify" in form


# --- A readback that keeps failing says why -------------------------------------------------


@pytest.fixture
def accepted(estate, agent) -> Effect:
    effect = commit_effect(agent, "a-stuck")
    assert effect.status == "accepted"
    return effect


def fail_readback(effect: Effect, times: int) -> None:
    for _ in range(times):
        with pytest.raises(OwnerUnavailable):
            effect_readback(effect_id=effect.pk)


def test_a_stuck_readback_shows_why_the_attempts_and_the_next_check(auditor_browser, accepted):
    sandbox_fault_add(source="case-service", kind="unavailable")
    fail_readback(accepted, 3)
    page = auditor_browser.get("/effects/a-stuck/").content.decode()
    stuck = section(page, 'id="check-stuck"', "</div>")
    assert "Readback stuck" in stuck
    assert "case-service" in stuck and "unavailable" in stuck
    assert "3 readback attempts so far" in stuck
    assert "checked again at" in stuck  # the next check, from next_check_at
    assert "Readback under way" not in page
    assert 'data-stuck="true"' in page
    # "Attempts" explains itself in the page (a title tooltip reaches no touch or keyboard
    # user), and the count names its explanation for screen readers.
    assert '<dd id="attempts" aria-describedby="attempts-help">' in page
    help_text = section(page, 'id="attempts-help"', "</p>")
    assert "reads the target independently" in help_text
    assert "owner's effect ledger" in help_text
    assert "Neither ever sends the command again." in help_text
    assert "<abbr" not in section(page, 'id="effect-status"', "</section>")


def test_a_stuck_readback_can_be_retried_now_and_clears_once_read(operator_browser, accepted):
    sandbox_fault_add(source="case-service", kind="unavailable")
    fail_readback(accepted, 1)
    assert 'id="run-readback"' in operator_browser.get("/effects/a-stuck/").content.decode()
    sandbox_faults_clear(source="case-service")
    assert read_back(accepted).status == "verified"
    page = operator_browser.get("/effects/a-stuck/").content.decode()
    assert 'id="check-stuck"' not in page
    assert Effect.objects.get(pk=accepted.pk).last_check_error == ""


def test_a_quarantined_source_holds_the_readback_and_says_so(auditor_browser, operator, accepted):
    response = operator.post(
        "/api/v1/quarantines",
        {"scope": "source", "target": "case-service", "reason": "suspected bad replica"},
    )
    assert response.status_code == 202
    fail_readback(accepted, 1)
    stuck = section(
        auditor_browser.get("/effects/a-stuck/").content.decode(), 'id="check-stuck"', "</div>"
    )
    assert "quarantined" in stuck and "readback held" in stuck


def test_an_unknown_outcome_the_ledger_cannot_settle_says_why(auditor_browser, unknown_effect):
    from reconcile_app.services.effects import effect_resolve_unknown

    sandbox_fault_add(source="case-service", kind="unavailable")
    effect_resolve_unknown(effect_id=unknown_effect.pk)
    stuck = section(
        auditor_browser.get("/effects/u-1/").content.decode(), 'id="check-stuck"', "</div>"
    )
    assert "Resolution not settled" in stuck and "owner's ledger unavailable" in stuck
    assert "1 ledger attempt so far" in stuck


# --- Timelines in the operators' words ------------------------------------------------------


def test_run_readback_now_is_audited_as_queued_not_removed(operator_browser, unknown_effect):
    operator_browser.post("/effects/u-1/check/", HTTP_HX_REQUEST="true")
    page = operator_browser.get("/effects/u-1/").content.decode()
    audit = section(page, 'aria-label="Operator actions"')
    row = section(audit, 'data-action="effect.readback"', "</tr>")
    assert "removed" not in row
    assert re.search(r"queued</span> resolution", row, re.I), row


def test_an_action_recorded_without_an_after_state_is_not_a_removal(
    operator_browser, operator, unknown_effect
):
    # How "Run readback now" was audited before: the status it was asked in, nothing after.
    audit_record(
        actor=operator.user,
        action="effect.readback",
        object_kind="effect",
        object_ref="u-1",
        before={"status": "unknown"},
    )
    page = operator_browser.get("/effects/u-1/").content.decode()
    row = section(section(page, 'aria-label="Operator actions"'), "data-action=", "</tr>")
    assert "removed" not in row and "unknown" in row
    audit_page = operator_browser.get("/audit/?object_ref=u-1").content.decode()
    assert "removed" not in audit_page


def test_timeline_steps_are_labelled_and_evidence_is_linked(operator_browser, unknown_effect):
    operator_browser.post("/effects/u-1/check/", HTTP_HX_REQUEST="true")
    # An older timeline row that recorded the Celery task's dotted name.
    EffectEvent.objects.create(
        effect=unknown_effect,
        at=timezone.now(),
        kind="check_requested",
        detail={"task": "reconcile_app.tasks.effect_readback_task"},
    )
    page = operator_browser.get("/effects/u-1/").content.decode()
    timeline = section(page, 'id="timeline"', "</table>")
    assert "reconcile_app.tasks" not in page
    assert "Check requested by an operator" in timeline
    assert "No answer (outcome unknown)" in timeline
    assert ">readback<" in timeline and ">resolution<" in timeline
    evidence = unknown_effect.events.get(kind="timeout").evidence_id
    assert f'<a class="tag mono" href="/evidence/{evidence}/">{evidence}</a>' in timeline
    assert operator_browser.get(f"/evidence/{evidence}/").status_code == 200


def test_no_two_sections_share_a_heading(operator_browser, unknown_effect):
    page = operator_browser.get("/effects/u-1/").content.decode()
    headings = [
        re.sub(r"\s+\d+\+?$", "", re.sub(r"<[^>]+>", "", heading).strip())
        for heading in re.findall(r"<h2[^>]*>(.*?)</h2>", page, re.S)
    ]
    assert "Operator actions" in headings and "Settle this outcome" in headings
    assert len(headings) == len(set(headings)), headings
