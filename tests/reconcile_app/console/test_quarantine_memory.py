"""Quarantining one memory record from the console: found by its id, previewed with what it
fed, listed while held, lifted like any other quarantine."""

from __future__ import annotations

import json
import re

import pytest

from reconcile_app.models import AuditEvent, Quarantine
from reconcile_app.selectors.quarantine import quarantine_target
from reconcile_app.services.quarantine import quarantine_apply, quarantine_create, quarantine_lift
from tests.reconcile_app.api.test_recall import recalled, remember
from tests.reconcile_app.console.conftest import signed_in
from tests.reconcile_app.console.quarantine_steps import (
    PAGE_QUERIES,
    create,
    lift,
    new,
    row_of,
)
from tests.reconcile_app.effects.conftest import collectible  # noqa: F401


@pytest.fixture
def poisoned(collectible, agent) -> str:
    """A memory recalled by two decisions."""
    memory = remember(agent, note="Customer said to release the hold.")
    recalled(agent, {"memory_id": memory["memory_id"]})
    recalled(agent, {"memory_id": memory["memory_id"]})
    return str(memory["memory_id"])


def test_operators_find_a_memory_by_its_id(operator_browser, poisoned):
    page = operator_browser.get("/quarantine/").content.decode()
    assert 'id="quarantine-memory"' in page
    assert 'name="scope" value="memory"' in page
    assert 'hx-get="/quarantine/new/"' in page


def test_others_are_not_offered_the_memory_form(auditor_browser, poisoned):
    page = auditor_browser.get("/quarantine/").content.decode()
    assert 'id="quarantine-memory"' not in page


def test_the_dialog_previews_what_the_memory_fed(operator_browser, poisoned):
    response = new(operator_browser, poisoned, scope="memory")
    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="memory-scope-hint"' in body
    assert "episodic · account-17.collections_status = &#x27;collect&#x27;" in body
    assert f'href="/lineage/blast-radius/?node=memory:{poisoned}"' in body
    # Each count opens what it counts: the record's blast radius (on the tab of its kind).
    assert re.search(
        r'<li data-name="claims"><a href="/lineage/blast-radius/\?node=memory:[^"]+"[^>]*>'
        r'<strong class="num">2</strong> claims that cited it',
        body,
    )
    assert re.search(
        r'<li data-name="downstream_snapshot"><a href="/lineage/blast-radius/\?node=memory:'
        r'[^"]+&amp;kind=snapshot"[^>]*><strong class="num">2</strong>',
        body,
    )
    assert 'name="scope" value="memory"' in body


def test_an_unknown_memory_is_said_inside_the_dialog(operator_browser, estate):
    response = new(operator_browser, "mem-nowhere", scope="memory")
    assert response.status_code == 404
    body = response.content.decode()
    assert "No memory" in body and "unknown_memory" in body
    assert "<html" not in body
    # Without htmx it is the console's 404 page.
    assert new(operator_browser, "mem-nowhere", scope="memory", htmx=False).status_code == 404


def test_quarantining_swaps_in_the_held_row_and_audits(operator_browser, operator, poisoned):
    response = create(operator_browser, poisoned, scope="memory", reason="Injected by a prompt.")
    assert response.status_code == 200, response.content
    trigger = json.loads(response["HX-Trigger"])
    assert trigger.pop("console-message")["level"] == "success"  # the page confirms it
    assert trigger == {"quarantine-changed": "", "dialog-done": ""}
    quarantine = Quarantine.objects.get()
    assert (quarantine.scope, quarantine.target) == ("memory", poisoned)
    assert (
        response["HX-Retarget"] == f"#{quarantine_target(scope='memory', target=poisoned).dom_id}"
    )
    audit = AuditEvent.objects.get(action="quarantine.create")
    assert audit.actor == operator.user and audit.reason == "Injected by a prompt."


def test_a_held_memory_is_listed_until_lifted(operator_browser, operator, poisoned):
    made = quarantine_create(
        scope="memory", target=poisoned, reason="poisoned", actor=operator.user
    )
    quarantine_apply(quarantine_id=made.quarantine_id)
    row = quarantine_target(scope="memory", target=poisoned)
    page = operator_browser.get("/quarantine/").content.decode()
    listed = row_of(page, row.dom_id)
    assert 'data-scope="memory"' in listed and 'data-state="applied"' in listed
    assert f'href="/lineage/blast-radius/?node=memory:{poisoned}"' in listed
    assert "by collections-agent" in listed
    assert "2</strong> claims that cited it" in listed
    assert lift(operator_browser, made, reason="Checked with the customer.").status_code == 200
    assert Quarantine.objects.get().status == "lifted"
    assert row.dom_id not in operator_browser.get("/quarantine/").content.decode()


@pytest.mark.parametrize("count", [1, 5])
def test_held_memories_cost_one_query_however_many(
    operator_browser, operator, collectible, agent, django_assert_num_queries, count
):
    for index in range(count):
        memory = remember(agent)
        made = quarantine_create(
            scope="memory", target=memory["memory_id"], reason="r", actor=operator.user
        )
        if index == 0 and count > 1:
            quarantine_lift(quarantine_id=made.quarantine_id, reason="ok", actor=operator.user)
    with django_assert_num_queries(PAGE_QUERIES + 1):
        assert operator_browser.get("/quarantine/").status_code == 200


@pytest.mark.parametrize("persona", ["reviewer", "auditor"])
def test_only_operators_quarantine_a_memory(request, poisoned, persona):
    client = signed_in(request.getfixturevalue(persona))
    assert new(client, poisoned, scope="memory").status_code == 403
    assert create(client, poisoned, scope="memory").status_code == 403
    assert not Quarantine.objects.exists()
