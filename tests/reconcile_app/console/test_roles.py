"""Roles in the console, from one table.

`CONSOLE` lists every console page and, on each, the actions it can offer with the one role
that may use them. From it:

- every persona (operator, reviewer, auditor, an agent's user, an anonymous visitor) gets every
  page with the status its role allows (people 200, agents 403, visitors sent to log in);
- each action's button or form is on the page for its role and for no other;
- the server refuses each action's request from every other persona (403, or log in first)
  and changes nothing, while the role it belongs to gets it done.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.test import Client

from reconcile_app.models import (
    AuditEvent,
    Quarantine,
)
from tests.conftest import COLLECTIONS
from tests.reconcile_app.console.conftest import signed_in
from tests.reconcile_app.console.roles_world import (  # noqa: F401 (a fixture)
    LIFTABLE,
    TRUSTED,
    World,
    world,
)

OPERATOR, REVIEWER, AUDITOR, AGENT, ANONYMOUS = (
    "operator",
    "reviewer",
    "auditor",
    "agent",
    "anonymous",
)
PEOPLE = (OPERATOR, REVIEWER, AUDITOR)
PERSONAS = (*PEOPLE, AGENT, ANONYMOUS)


@dataclass(frozen=True)
class Action:
    name: str
    role: str
    # Markup that only appears where the action is offered (a form's action, a button id).
    offer: Callable[[World], str]
    method: str
    path: Callable[[World], str]
    data: Callable[[World], dict[str, str]] = lambda world: {}
    # The audit action its success writes; None for a dialog that only shows a form.
    audited_as: str | None = None


@dataclass(frozen=True)
class Page:
    name: str
    path: Callable[[World], str]
    actions: tuple[Action, ...] = field(default=())


CONSOLE: tuple[Page, ...] = (
    Page("overview", lambda w: "/"),
    Page("snapshots", lambda w: "/snapshots/"),
    Page("snapshot detail", lambda w: f"/snapshots/{w.snapshot_id}/"),
    Page(
        "contradictions",
        lambda w: "/contradictions/",
        (
            Action(
                "resolve contradiction",
                OPERATOR,
                offer=lambda w: f'action="/contradictions/{w.contradiction.pk}/resolve/"',
                method="post",
                path=lambda w: f"/contradictions/{w.contradiction.pk}/resolve/",
                data=lambda w: {"note": "The owner confirmed the hold."},
                audited_as="contradiction.resolve",
            ),
        ),
    ),
    Page("escalations", lambda w: "/escalations/"),
    Page(
        "escalation detail",
        lambda w: f"/escalations/{w.escalation.escalation_id}/",
        (
            Action(
                "approve escalation",
                REVIEWER,
                offer=lambda w: 'id="approve-form"',
                method="post",
                path=lambda w: f"/escalations/{w.escalation.escalation_id}/approve/",
                data=lambda w: {
                    "rationale": "The registry agrees.",
                    "selected_ref": w.escalation.candidate_refs[0],
                },
                audited_as="escalation.approve",
            ),
            Action(
                "reject escalation",
                REVIEWER,
                offer=lambda w: 'id="reject-form"',
                method="post",
                path=lambda w: f"/escalations/{w.escalation.escalation_id}/reject/",
                data=lambda w: {"rationale": "Not settled yet."},
                audited_as="escalation.reject",
            ),
        ),
    ),
    Page("effects", lambda w: "/effects/"),
    Page(
        "effect detail",
        lambda w: f"/effects/{w.effect.idempotency_key}/",
        (
            Action(
                "run readback now",
                OPERATOR,
                offer=lambda w: 'id="run-readback"',
                method="post",
                path=lambda w: f"/effects/{w.effect.idempotency_key}/check/",
                audited_as="effect.readback",
            ),
            Action(
                "resolve effect by hand",
                OPERATOR,
                offer=lambda w: 'id="resolve-form"',
                method="post",
                path=lambda w: f"/effects/{w.effect.idempotency_key}/resolve/",
                data=lambda w: {"outcome": "succeeded", "reason": "The owner's ledger has it."},
                audited_as="effect.resolve",
            ),
            Action(
                "escalate effect to owner",
                OPERATOR,
                offer=lambda w: 'id="escalate-form"',
                method="post",
                path=lambda w: f"/effects/{w.effect.idempotency_key}/escalate/",
                data=lambda w: {"reason": "Ledger and readback disagree."},
                audited_as="effect.escalate",
            ),
        ),
    ),
    Page("promotions", lambda w: "/promotions/"),
    Page(
        "memory detail",
        lambda w: f"/memories/{w.suggestion.memory_id}/",
        (
            Action(
                "promote a suggested memory",
                REVIEWER,
                offer=lambda w: 'id="approve-form"',
                method="post",
                path=lambda w: (
                    f"/promotions/{w.suggestion.promotions.get().escalation_id}/approve/"
                ),
                data=lambda w: {"rationale": "The runbook matches the owner's procedure."},
                audited_as="memory.promote",
            ),
            Action(
                "reject a suggested memory",
                REVIEWER,
                offer=lambda w: 'id="reject-form"',
                method="post",
                path=lambda w: f"/promotions/{w.suggestion.promotions.get().escalation_id}/reject/",
                data=lambda w: {"rationale": "Not how the owner does it."},
                audited_as="memory.reject",
            ),
        ),
    ),
    Page("memory classes", lambda w: "/memory-classes/"),
    Page("contracts", lambda w: "/contracts/"),
    Page(
        "contract version",
        lambda w: f"/contracts/{COLLECTIONS}/{w.draft_version}/",
        (
            Action(
                "activate a contract version",
                REVIEWER,
                offer=lambda w: 'id="activate-form"',
                method="post",
                path=lambda w: f"/contracts/{COLLECTIONS}/{w.draft_version}/activate/",
                data=lambda w: {
                    "rationale": "Complaints must be read first.",
                    "confirm": f"{COLLECTIONS}@{w.draft_version}",
                },
                audited_as="contract.activation_requested",
            ),
        ),
    ),
    Page(
        "contract release panel", lambda w: f"/contracts/{COLLECTIONS}/{w.draft_version}/release/"
    ),
    Page("contract diff", lambda w: f"/contracts/{COLLECTIONS}/diff/"),
    Page("facts", lambda w: "/facts/"),
    Page("fact detail", lambda w: f"/facts/{w.escalation.fact_key}/"),
    Page(
        "quarantine",
        lambda w: "/quarantine/",
        (
            Action(
                "open the quarantine dialog",
                OPERATOR,
                offer=lambda w: f'href="/quarantine/new/?scope=source&amp;target={TRUSTED}"',
                method="get",
                path=lambda w: f"/quarantine/new/?scope=source&target={TRUSTED}",
            ),
            Action(
                "quarantine a source",
                OPERATOR,
                offer=lambda w: 'id="ops-dialog"',
                method="post",
                path=lambda w: "/quarantine/new/",
                data=lambda w: {
                    "scope": "source",
                    "target": TRUSTED,
                    "reason": "Owner reports corrupt exports.",
                    "confirm": TRUSTED,
                },
                audited_as="quarantine.create",
            ),
            Action(
                "open the lift dialog",
                OPERATOR,
                offer=lambda w: f'href="/quarantine/{w.quarantine.quarantine_id}/lift/"',
                method="get",
                path=lambda w: f"/quarantine/{w.quarantine.quarantine_id}/lift/",
            ),
            Action(
                "lift a quarantine",
                OPERATOR,
                offer=lambda w: "data-opens-dialog>Lift…</a>",
                method="post",
                path=lambda w: f"/quarantine/{w.quarantine.quarantine_id}/lift/",
                data=lambda w: {"reason": "The owner fixed the export."},
                audited_as="quarantine.lift",
            ),
        ),
    ),
    Page(
        "drills",
        lambda w: "/drills/",
        (
            Action(
                "start a drift benchmark",
                OPERATOR,
                offer=lambda w: 'id="start-drift"',
                method="post",
                path=lambda w: "/drills/",
                data=lambda w: {
                    "kind": "drift_benchmark",
                    "episodes": "20",
                    "min_horizon": "2",
                    "max_horizon": "3",
                    "interval": "10",
                    "mutation_rate": "0.22",
                    "omission_rate": "0.18",
                    "seed": "1",
                    "reason": "Compare with last week's run",
                },
                audited_as="drill.start",
            ),
        ),
    ),
    Page(
        "bulk job",
        lambda w: f"/jobs/{w.job_id}/",
        (
            Action(
                "cancel a bulk job",
                OPERATOR,
                offer=lambda w: 'id="job-cancel-form"',
                method="post",
                path=lambda w: f"/jobs/{w.job_id}/cancel/",
                data=lambda w: {"reason": "Wrong action chosen."},
                audited_as="bulk_job.cancel",
            ),
        ),
    ),
    Page("audit", lambda w: "/audit/"),
    Page("audit export", lambda w: "/audit/export.csv"),
    Page("lineage", lambda w: "/lineage/"),
)
ACTIONS = [(page, action) for page in CONSOLE for action in page.actions]


@pytest.fixture
def browser(request) -> Callable[[str], Client]:
    """A signed-in client per persona, all made up front: making a person is itself audited."""
    clients = {
        persona: Client() if persona == ANONYMOUS else signed_in(request.getfixturevalue(persona))
        for persona in PERSONAS
    }
    return clients.__getitem__


def expected_status(persona: str) -> int:
    return {AGENT: 403, ANONYMOUS: 302}.get(persona, 200)


def send(client: Client, action: Action, world: World) -> Any:
    if action.method == "get":
        return client.get(action.path(world))
    return client.post(action.path(world), action.data(world))


def test_the_table_covers_every_section_of_the_navigation(world):
    from django.urls import reverse

    from reconcile_app.console.context import SECTIONS

    paths = {page.path(world) for page in CONSOLE}
    missing = [section.label for section in SECTIONS if reverse(section.url_name) not in paths]
    assert not missing


@pytest.mark.parametrize("persona", PERSONAS)
def test_every_page_answers_each_persona_as_its_role_allows(world, browser, persona):
    client = browser(persona)
    wrong = {}
    for page in CONSOLE:
        path = page.path(world)
        response = client.get(path)
        if response.status_code != expected_status(persona):
            wrong[page.name] = response.status_code
        elif persona == ANONYMOUS:
            assert response["Location"].startswith("/accounts/login/?next="), path
    assert not wrong, f"{persona} got {wrong}"


@pytest.mark.parametrize("persona", PEOPLE)
def test_actions_are_offered_only_to_their_role(world, browser, persona):
    client = browser(persona)
    wrong = []
    for page in CONSOLE:
        if not page.actions:
            continue
        html = client.get(page.path(world)).content.decode()
        for action in page.actions:
            offered = action.offer(world) in html
            if offered != (persona == action.role):
                wrong.append(f"{action.name} {'offered' if offered else 'missing'} on {page.name}")
    assert not wrong, f"{persona}: {wrong}"


@pytest.mark.parametrize(("page", "action"), ACTIONS, ids=[action.name for _, action in ACTIONS])
def test_the_server_refuses_an_action_to_every_other_role(world, browser, page, action):
    before = AuditEvent.objects.count()
    for persona in PERSONAS:
        if persona == action.role:
            continue
        response = send(browser(persona), action, world)
        expected = 302 if persona == ANONYMOUS else 403
        assert response.status_code == expected, (persona, action.name, response.status_code)
    assert AuditEvent.objects.count() == before, "a refused request changed something"
    assert Quarantine.objects.filter(target=TRUSTED).count() == 0

    # The role it belongs to gets it done: the refusals above were about the role.
    response = send(browser(action.role), action, world)
    assert response.status_code in (200, 302), (action.name, response.status_code)
    if action.audited_as is not None:
        assert AuditEvent.objects.filter(action=action.audited_as).exists(), action.name
