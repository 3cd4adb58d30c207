"""Activating a contract version from the console: reviewers only, with a rationale and the
version's label typed out; the gates run in the worker, and the page follows them by polling.

Inside a test transaction nothing runs on commit, so an activation stays `running` until the
test plays the worker (`contract_activation_run`), as the Celery task would.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from reconcile_app.choices import ActivationStatus
from reconcile_app.console.mixins import MAX_POLLS
from reconcile_app.models import AuditEvent, Contract, ContractActivation
from reconcile_app.services.contract_lifecycle import contract_activation_run
from tests.conftest import COLLECTIONS
from tests.reconcile_app.console.conftest import signed_in
from tests.reconcile_app.console.contract_world import (  # noqa: F401 (fixtures)
    ACTIVE,
    DRAFT,
    activate,
    contract_path,
    contract_world,
    gates,
)

DRAFT_LABEL = f"{COLLECTIONS}@{DRAFT}"
ACTIVE_LABEL = f"{COLLECTIONS}@{ACTIVE}"
# session, user, the user's groups, the version, its activations, the class's versions.
RELEASE_QUERIES = 6


def ask(client: Client, contract: Contract, *, request_id: str = "", **data: str) -> Any:
    """Post the Activate form; `data` overrides the rationale and the typed label."""
    body = {"rationale": "Complaints must be read first.", "confirm": DRAFT_LABEL, **data}
    headers = {"X-Request-ID": request_id} if request_id else None
    return client.post(contract_path(contract, "activate/"), body, headers=headers)


def release_panel(page: str) -> str:
    start = page.index('id="contract-release"')
    return page[start : page.index("</section>", start)]


def requested() -> int:
    """Activations people asked for (the estate's own loads ask too, as load_contracts)."""
    return (
        AuditEvent.objects.filter(action="contract.activation_requested")
        .exclude(actor_name="load_contracts")
        .count()
    )


def test_a_reviewer_is_offered_activation_with_what_it_does(reviewer_browser, contract_world):
    page = reviewer_browser.get(contract_path(contract_world.draft)).content.decode()
    form = page[
        page.index('id="activate-form"') : page.index("</form>", page.index("activate-form"))
    ]
    assert f'action="/contracts/{COLLECTIONS}/{DRAFT}/activate/"' in page
    assert f"<h3>Activate {DRAFT}</h3>" in form
    assert 'name="csrfmiddlewaretoken"' in form
    assert 'name="rationale"' in form and "required" in form
    assert f'data-must-match="{DRAFT_LABEL}"' in form
    does = form[form.index('id="activate-does"') :]
    assert "runs the release gates" in does
    assert f"{DRAFT} becomes the active version, {ACTIVE} retires" in does
    assert f"snapshots issued under {ACTIVE} stop authorising commits" in does
    assert "contract_superseded" in does


@pytest.mark.parametrize("persona", ["operator", "auditor"])
def test_non_reviewers_see_no_form_and_are_refused(request, contract_world, persona):
    client = signed_in(request.getfixturevalue(persona))
    page = client.get(contract_path(contract_world.draft)).content.decode()
    assert 'id="activate-form"' not in page
    assert "Only reviewers activate a contract version." in page
    assert ask(client, contract_world.draft).status_code == 403
    assert not ContractActivation.objects.filter(contract=contract_world.draft).exists()
    assert requested() == 0


def test_a_reviewer_activates_and_the_page_follows_the_gates(
    reviewer_browser, reviewer, contract_world, gates
):
    response = ask(reviewer_browser, contract_world.draft, request_id="req-activate-1")
    assert response.status_code == 302
    assert response["Location"] == contract_path(contract_world.draft)

    activation = ContractActivation.objects.get(contract=contract_world.draft)
    assert activation.status == ActivationStatus.RUNNING
    assert (activation.requested_by, activation.request_id) == (reviewer.user, "req-activate-1")
    audit = AuditEvent.objects.get(
        action="contract.activation_requested", actor_name="rhys-reviewer"
    )
    assert (audit.object_ref, audit.actor_name, audit.reason) == (
        DRAFT_LABEL,
        "rhys-reviewer",
        "Complaints must be read first.",
    )
    assert audit.request_id == "req-activate-1"

    # The page shows the running activation, polling, and offers no second request.
    page = reviewer_browser.get(contract_path(contract_world.draft)).content.decode()
    assert f"Activation {activation.activation_id} of {DRAFT_LABEL} requested" in page
    panel = release_panel(page)
    assert 'data-polling="true"' in panel and 'hx-trigger="every 2s"' in panel
    assert f"/contracts/{COLLECTIONS}/{DRAFT}/release/?since=" in panel
    assert "The gates are running." in panel
    assert 'id="activate-form"' not in page

    # Nothing moved yet: the poll answers the same panel, and no change event.
    since = f"{activation.activation_id}:running:draft"
    polled = reviewer_browser.get(contract_path(contract_world.draft, "release/"), {"since": since})
    assert "HX-Trigger" not in polled and 'data-polling="true"' in polled.content.decode()

    contract_activation_run(activation_id=activation.activation_id)  # the worker

    polled = reviewer_browser.get(
        contract_path(contract_world.draft, "release/"), {"since": since, "polls": "3"}
    )
    assert polled["HX-Trigger"] == "contract-changed"
    panel = polled.content.decode()
    assert 'data-status="activated"' in panel and 'data-polling="false"' in panel
    assert panel.count("data-gate=") == 7 and "replay: 2 checks passed" in panel
    assert f'<dd class="mono">{ACTIVE}</dd>' in panel  # what it replaced

    page = reviewer_browser.get(contract_path(contract_world.draft)).content.decode()
    assert 'id="contract-status" data-status="active"' in page
    contract_world.active.refresh_from_db()
    assert contract_world.active.status == "retired"
    assert gates.runs[-1] == DRAFT_LABEL


@pytest.mark.parametrize(
    ("data", "code", "kept"),
    [
        ({"rationale": "  "}, "rationale_required", DRAFT_LABEL),
        (
            {"confirm": DRAFT_LABEL.upper()},
            "confirmation_mismatch",
            "Complaints must be read first.",
        ),
        ({"confirm": ""}, "confirmation_mismatch", "Complaints must be read first."),
    ],
)
def test_refusals_are_shown_beside_the_form_with_the_draft_kept(
    reviewer_browser, contract_world, data, code, kept
):
    response = ask(reviewer_browser, contract_world.draft, **data)
    assert response.status_code == 400
    page = response.content.decode()
    error = page[page.index('id="activate-error"') :][:400]
    assert "Activation refused:" in error and code in error
    assert 'id="activate-form"' in page
    assert kept in page[page.index('id="activate-form"') :]
    assert 'aria-invalid="true"' in page
    assert not ContractActivation.objects.filter(contract=contract_world.draft).exists()
    assert requested() == 0


def test_the_active_version_cannot_be_activated_again(reviewer_browser, contract_world):
    response = ask(reviewer_browser, contract_world.active, confirm=ACTIVE_LABEL)
    assert response.status_code == 409
    page = response.content.decode()
    assert "already_active" in page[page.index('id="activate-error"') :][:400]
    assert 'id="activate-form"' not in page
    assert requested() == 0


def test_a_second_request_while_the_gates_run_is_refused(reviewer_browser, contract_world):
    assert ask(reviewer_browser, contract_world.draft).status_code == 302
    response = ask(reviewer_browser, contract_world.draft)
    assert response.status_code == 409
    assert "activation_in_progress" in response.content.decode()
    assert ContractActivation.objects.filter(contract=contract_world.draft).count() == 1


def test_a_refused_activation_shows_which_gate_failed_and_may_be_asked_again(
    reviewer_browser, reviewer, contract_world, gates
):
    gates.failing = {"replay", "fail_closed"}
    activate(contract_world.draft, reviewer)
    page = reviewer_browser.get(contract_path(contract_world.draft)).content.decode()
    panel = release_panel(page)
    assert 'data-status="refused"' in panel
    assert "release_gate_failed: replay, fail_closed failed" in panel
    assert 'data-gate="replay" data-gate-status="failed"' in panel
    assert "replay: 1 of 2 checks failed" in panel
    assert 'id="contract-status" data-status="draft"' in page
    assert 'id="activate-form"' in page  # fix the cause, then ask again


def test_rolling_back_is_offered_on_an_earlier_retired_version(
    reviewer_browser, reviewer, contract_world
):
    activate(contract_world.draft, reviewer)
    page = reviewer_browser.get(contract_path(contract_world.active)).content.decode()
    assert f"<h3>Roll back to {ACTIVE}</h3>" in page
    assert f"{ACTIVE} becomes the active version, {DRAFT} retires" in page
    assert "Retired" in page[page.index('id="status-banner"') :][:600]

    response = ask(
        reviewer_browser,
        contract_world.active,
        confirm=ACTIVE_LABEL,
        rationale="7.4 refuses too much.",
    )
    assert response.status_code == 302
    contract_activation_run(
        activation_id=ContractActivation.objects.filter(contract=contract_world.active)
        .latest("requested_at")
        .activation_id
    )
    rollback = AuditEvent.objects.get(action="contract.rollback")
    assert (rollback.object_ref, rollback.reason) == (ACTIVE_LABEL, "7.4 refuses too much.")
    # 7.4 is retired but newer than what is active: activating it again is not a rollback.
    page = reviewer_browser.get(contract_path(contract_world.draft)).content.decode()
    assert f"<h3>Activate {DRAFT}</h3>" in page


def test_activation_enforces_csrf(reviewer, contract_world):
    client = Client(enforce_csrf_checks=True)
    client.force_login(reviewer.user)
    assert ask(client, contract_world.draft).status_code == 403
    assert requested() == 0


def test_polling_stops_after_a_while_and_says_so(reviewer_browser, contract_world):
    ask(reviewer_browser, contract_world.draft)
    panel = reviewer_browser.get(
        contract_path(contract_world.draft, "release/"), {"polls": str(MAX_POLLS)}
    ).content.decode()
    assert 'data-polling="false"' in panel and "hx-trigger" not in panel
    assert "stopped refreshing" in panel


def test_release_panel_query_count_is_pinned(
    reviewer_browser, reviewer, contract_world, gates, django_assert_num_queries
):
    gates.failing = {"replay"}
    for _ in range(3):
        activate(contract_world.draft, reviewer)
    with django_assert_num_queries(RELEASE_QUERIES):
        response = reviewer_browser.get(contract_path(contract_world.draft, "release/"))
    assert 'data-status="refused"' in response.content.decode()
