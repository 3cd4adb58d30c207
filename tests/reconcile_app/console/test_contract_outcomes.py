"""The diff of two contract versions shows what the new one does to the class's latest
decisions (services/outcome_preview): 7.4 denies what 7.3 allows and passes every release
gate, so the reviewer reads the change on the page they read before activating."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import call_command

from reconcile_app.reconciliation import engine
from tests.conftest import COLLECTIONS
from tests.factories import write_yaml
from tests.reconcile_app.api.test_contract_lifecycle import DENIES_COLLECT
from tests.reconcile_app.effects.conftest import collectible, reconcile  # noqa: F401

DIFF = f"/contracts/{COLLECTIONS}/diff/"
# As the diff page's own (test_contracts.DIFF_QUERIES), and the evidence the decisions cite.
QUERIES = 9


@pytest.fixture
def denying_draft(collectible, tmp_path) -> None:
    call_command(
        "load_contracts",
        str(write_yaml(tmp_path, "next.yaml", DENIES_COLLECT)),
        "--draft",
        stdout=StringIO(),
    )


def section(page: str) -> str:
    start = page.index('id="diff-outcomes"')
    return page[start : page.index("</section>", start)]


def test_the_diff_says_how_many_latest_decisions_a_version_changes(
    agent, denying_draft, reviewer_browser
):
    snapshots = [reconcile(agent)["snapshot_id"] for _ in range(2)]

    page = reviewer_browser.get(DIFF, {"from": "7.3", "to": "7.4"}).content.decode()

    panel = section(page)
    assert "<strong>2</strong> of 2 decisions decide differently" in panel
    assert re.search(
        r'<tr class="diff-changed"><td><span class="badge [^"]+">allow</span></td>'
        r'<td><span class="badge [^"]+">deny</span></td><td class="num">2</td>',
        panel,
    )
    for snapshot_id in snapshots:
        assert f'href="/snapshots/{snapshot_id}/"' in panel
    assert "deny (hardship_hold)" in panel


def test_the_same_rules_change_nothing(agent, collectible, reviewer_browser):
    reconcile(agent)

    page = reviewer_browser.get(DIFF, {"from": "7.3", "to": "7.3"}).content.decode()

    assert 'id="diff-outcomes"' not in page  # the same version: nothing to decide again


@pytest.mark.parametrize("decisions", [2, 12])
def test_the_panel_costs_the_same_however_many_decisions(
    agent, denying_draft, auditor_browser, django_assert_num_queries, decisions
):
    for _ in range(decisions):
        reconcile(agent)
    auditor_browser.get(DIFF, {"from": "7.3", "to": "7.4"})  # each version's spec, once

    with django_assert_num_queries(QUERIES):
        page = auditor_browser.get(DIFF, {"from": "7.3", "to": "7.4"}).content.decode()

    assert f"<strong>{decisions}</strong> of {decisions} decisions" in section(page)


def test_decisions_none_of_which_could_be_decided_again_are_not_called_none_made(
    agent, denying_draft, reviewer_browser, monkeypatch
):
    reconcile(agent)

    def cannot(**kwargs):
        raise KeyError("binding")

    monkeypatch.setattr(engine, "evaluate", cannot)

    panel = section(reviewer_browser.get(DIFF, {"from": "7.3", "to": "7.4"}).content.decode())

    assert "None of the latest decisions was decided again" in panel
    assert "No decision of this class has been made yet" not in panel
    assert "1 could not be decided again" in panel
