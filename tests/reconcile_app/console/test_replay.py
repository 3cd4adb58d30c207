"""Replay from the snapshot page: "exact" as recorded, the differences under corrections."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.template.loader import render_to_string
from django.test import Client

from reconcile_app.demo.estate_loader import demo_estate_load
from reconcile_app.models import AuditEvent, DecisionSnapshot, EvidenceEntry
from reconcile_app.services.replay import ReplayResult
from sandbox_app.services import sandbox_fault_add
from tests.reconcile_app.console.conftest import signed_in
from tests.reconcile_app.lineage_chain import (  # noqa: F401 (fixtures)
    chain,
    collectible,
    correction,
)

HTMX: dict[str, Any] = {"HTTP_HX_REQUEST": "true"}


def replay(client: Client, snapshot_id: str, mode: str) -> str:
    response = client.post(f"/snapshots/{snapshot_id}/replay/", {"mode": mode}, **HTMX)
    assert response.status_code == 200, response.content
    return response.content.decode()


def differences(page: str) -> dict[str, tuple[str, str]]:
    found = {}
    for row in re.findall(r"<tr>(.*?)</tr>", page, re.S):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        if len(cells) == 3:
            found[cells[0]] = (cells[1], cells[2])
    return found


@pytest.mark.parametrize("persona", ["operator_browser", "reviewer_browser", "auditor_browser"])
def test_every_role_sees_the_replay_buttons(chain, persona, request):
    page = request.getfixturevalue(persona).get(f"/snapshots/{chain.snapshot_id}/").content
    text = page.decode()
    assert 'id="replay"' in text
    assert f'hx-post="/snapshots/{chain.snapshot_id}/replay/"' in text
    assert 'name="mode" value="as_recorded"' in text and 'name="mode" value="corrected"' in text
    assert 'name="csrfmiddlewaretoken"' in text


@pytest.mark.parametrize("persona", ["operator_browser", "reviewer_browser", "auditor_browser"])
def test_replay_as_recorded_is_exact(chain, persona, request):
    page = replay(request.getfixturevalue(persona), chain.snapshot_id, "as_recorded")
    assert 'data-exact="true"' in page
    assert "exact — hash matches" in page
    snapshot = DecisionSnapshot.objects.get(snapshot_id=chain.snapshot_id)
    assert f'title="recorded {snapshot.content_hash}"' in page
    assert 'id="replay-differences"' not in page


def test_replay_with_no_correction_is_exact_too(chain, auditor_browser):
    page = replay(auditor_browser, chain.snapshot_id, "corrected")
    assert 'data-exact="true"' in page and "Downstream of" not in page


def test_after_a_correction_the_corrected_replay_shows_allow_becoming_refuse(
    chain, correction, auditor_browser
):
    as_recorded = replay(auditor_browser, chain.snapshot_id, "as_recorded")
    assert "exact — hash matches" in as_recorded  # Wednesday never sees Thursday
    corrected = replay(auditor_browser, chain.snapshot_id, "corrected")
    assert 'data-exact="false"' in corrected
    changed = differences(corrected)
    assert changed["decision.result"] == ("allow", "refuse")
    assert "evidence_missing" in changed["decision.reasons"][1]
    assert "ev-collect" in changed["fields.collections_status.evidence"][0]
    # And why: the correction this snapshot is downstream of.
    assert f'href="/corrections/{correction.correction_id}/"' in corrected


def test_replay_is_read_only(chain, correction, operator_browser):
    counts = (DecisionSnapshot.objects.count(), EvidenceEntry.objects.count())
    audits = AuditEvent.objects.count()
    replay(operator_browser, chain.snapshot_id, "corrected")
    assert (DecisionSnapshot.objects.count(), EvidenceEntry.objects.count()) == counts
    assert AuditEvent.objects.count() == audits


def test_an_invalid_mode_is_said_in_the_panel(chain, operator_browser):
    page = replay(operator_browser, chain.snapshot_id, "sideways")
    assert 'role="alert"' in page and "invalid_mode" in page


def test_without_htmx_the_answer_comes_back_as_a_message(chain, operator_browser):
    response = operator_browser.post(
        f"/snapshots/{chain.snapshot_id}/replay/", {"mode": "as_recorded"}, follow=True
    )
    assert response.redirect_chain[-1][0] == f"/snapshots/{chain.snapshot_id}/#replay"
    assert "Replay as recorded: exact — hash matches." in response.content.decode()


def test_replay_needs_the_csrf_token(chain, operator):
    client = signed_in(operator, enforce_csrf_checks=True)
    response = client.post(f"/snapshots/{chain.snapshot_id}/replay/", {"mode": "as_recorded"})
    assert response.status_code == 403


def test_agents_and_strangers_cannot_replay_here(chain, agent):
    assert Client().post(f"/snapshots/{chain.snapshot_id}/replay/").status_code == 302
    client = Client()
    client.force_login(agent.user)
    response = client.post(f"/snapshots/{chain.snapshot_id}/replay/", {"mode": "as_recorded"})
    assert response.status_code == 403


def test_unknown_snapshot_is_404(operator_browser, db):
    response = operator_browser.post("/snapshots/snap_nope/replay/", {"mode": "as_recorded"})
    assert response.status_code == 404


def test_a_replay_an_owner_could_not_complete_says_so_apart_from_the_differences(
    auditor_browser,
):
    """The demo's letter folds the hardship ledger's events: with the ledger down now, the
    replay differs because it could not ask, and the page says that, not that the decision
    changed."""
    demo_estate_load()
    snapshot = DecisionSnapshot.objects.filter(decision_class="collections-letter").first()
    assert snapshot is not None
    ledger = snapshot.content["fields"]["hardship_active"]["source"]
    assert replay(auditor_browser, snapshot.snapshot_id, "as_recorded").count("Could not") == 0
    sandbox_fault_add(source=ledger, kind="unavailable", count=1)

    page = replay(auditor_browser, snapshot.snapshot_id, "as_recorded")

    assert 'data-exact="false"' in page
    incomplete = page.split('class="alert replay-incomplete"', 1)[1].split("</p>", 1)[0]
    assert f'<span class="mono">{ledger}</span> could not give its events again now' in incomplete
    assert differences(page)["fields.hardship_active.status"][1] == "unavailable"


@pytest.mark.parametrize("inferred", [None, 7])
def test_a_replay_read_to_the_last_cited_entry_says_where_it_read_to(inferred):
    """A snapshot from before `ledger_seq` was kept, exact only read to the last entry it
    cites (services/replay.py; the race itself: tests/reconcile_app/api/
    test_replay_append_race.py): the page says how far it read, and why."""
    result = ReplayResult(
        mode="as_recorded",
        snapshot_id="snap_1",
        exact=True,
        original_hash="a" * 64,
        replayed_hash="a" * 64,
        inferred_ledger_seq=inferred,
    )
    html = render_to_string("reconcile_app/partials/replay_result.html", {"result": result})
    said = re.search(r"Read up to entry #(\d+), the last this decision cites", html)
    assert (said.group(1) if said else None) == (str(inferred) if inferred else None)
