"""The facts pages: each key's selection by the owner's rule, and a key's whole history."""

from __future__ import annotations

import re

import pytest

from reconcile_app.models import Escalation, MemoryRecord
from reconcile_app.services.facts import authority_source_for, authority_sources
from reconcile_app.sources import AuthorityResult
from sandbox_app.adapter import SandboxAdapter
from sandbox_app.services import sandbox_fault_add
from tests.reconcile_app.console.conftest import BASELINE
from tests.reconcile_app.facts.conftest import authority, remember

# session, user, the user's groups, the paginator's count, the page of keys, their records,
# the sources that answer for fact keys, the open escalations of the page's keys, the
# quarantined memory classes.
LIST_QUERIES = 9
# session, user, the user's groups, the key's records, its escalations, the authority source,
# the quarantined memory classes, the audit timeline (key, memories and escalations).
DETAIL_QUERIES = 8


def fact_rows(page: str) -> list[str]:
    return re.findall(r'<tr data-fact-key="([^"]+)"', page)


def row(page: str, fact_key: str) -> str:
    start = page.index(f'<tr data-fact-key="{fact_key}"')
    return page[start : page.index("</tr>", start)]


@pytest.fixture
def settled(registry, agent) -> str:
    """A key whose owner's rule selects exactly one record."""
    key = "baseline.reading-eval"
    authority(key)
    remember(agent, key, "reading-v18", "ckpt-0601", "registry@r18", valid_until="2026-12-31")
    return key


def test_list_shows_each_key_with_its_selection(auditor_browser, settled):
    page = auditor_browser.get("/facts/?on=2026-09-30").content.decode()
    assert fact_rows(page) == [settled]
    line = row(page, settled)
    assert f'href="/facts/{settled}/"' in line
    assert '<span class="badge badge-green">ok</span>' in line
    assert "ckpt-0601" in line
    assert 'eval-registry<span class="muted">@</span><span class="mono">registry@r18</span>' in line
    assert "reading-v18" in line
    assert "from eval-registry" in line  # the owner's own answer, and who gave it


def test_list_shows_codes_and_never_opens_an_escalation(auditor_browser, registry, agent, settled):
    from tests.reconcile_app.facts.conftest import remember as write

    key = "baseline.vision-eval"
    authority(key)
    write(agent, key, "vision-a", "ckpt-1", "registry@r18")
    write(agent, key, "vision-b", "ckpt-2", "registry@r18")
    page = auditor_browser.get("/facts/").content.decode()
    assert '<span class="badge badge-amber">authority ambiguous</span>' in row(page, key)
    # Looking is not asking: the page did not open (or freeze) anything.
    assert not Escalation.objects.exists()


def test_list_links_the_open_escalation(auditor_browser, escalation):
    line = row(auditor_browser.get("/facts/").content.decode(), BASELINE)
    assert f'href="/escalations/{escalation.escalation_id}/"' in line
    assert (
        '<span class="badge badge-purple" title="writes to this key wait for the escalation">frozen</span>'
        in line
    )


@pytest.mark.parametrize(
    ("on", "code"),
    [("2026-12-31", "ok"), ("2027-01-01", "no current record")],
)
def test_the_date_decides_validity_inclusively(auditor_browser, settled, on, code):
    page = auditor_browser.get(f"/facts/?on={on}").content.decode()
    assert f">{code}</span>" in row(page, settled)
    assert f"on {on}" in page


def test_an_invalid_date_is_reported_and_today_is_used(auditor_browser, settled, escalation):
    page = auditor_browser.get("/facts/?on=tomorrow&fact_key=reading").content.decode()
    assert 'role="alert"' in page and "YYYY-MM-DD" in page
    assert fact_rows(page) == [settled]  # the other filter still applies


def test_owner_missing_and_unavailable_authority_are_codes(auditor_browser, registry, agent):
    authority("baseline.orphan")
    remember(agent, "baseline.orphan", "orphan-1", "ckpt-1", "registry@r18", owner=None)
    authority("baseline.down")
    remember(agent, "baseline.down", "down-1", "ckpt-1", "registry@r18")
    sandbox_fault_add(source="eval-registry", kind="unavailable", count=1)
    page = auditor_browser.get("/facts/").content.decode()
    # Keys are asked in order: "down" first, while the owner is unavailable.
    assert "current authority unavailable" in row(page, "baseline.down")
    assert "owner missing" in row(page, "baseline.orphan")
    assert not Escalation.objects.exists()


def test_a_key_the_owner_registers_nobody_for_says_so(auditor_browser, registry, agent):
    """The owner's answer, not an outage: the row says "none registered", not "unavailable"."""
    remember(agent, "baseline.unregistered", "un-1", "ckpt-1", "registry@r18")
    shown = row(auditor_browser.get("/facts/").content.decode(), "baseline.unregistered")
    assert "none registered" in shown and "registers no authority" in shown


def test_search_narrows_the_keys(auditor_browser, settled, escalation):
    page = auditor_browser.get("/facts/?fact_key=reading").content.decode()
    assert fact_rows(page) == [settled]


def test_htmx_request_gets_the_table_partial(auditor_browser, settled):
    body = auditor_browser.get("/facts/", HTTP_HX_REQUEST="true").content.decode()
    assert body.lstrip().startswith('<section id="fact-table"')
    assert "<html" not in body


@pytest.mark.parametrize("keys", [1, 9])
def test_list_query_count_does_not_grow_with_keys_or_records(
    auditor_browser, registry, agent, django_assert_num_queries, monkeypatch, keys
):
    for index in range(keys):
        key = f"baseline.eval-{index}"
        authority(key)
        for version in range(3):
            remember(agent, key, f"eval-{index}-{version}", f"ckpt-{version}", "registry@r18")
    # The owner's authority is the owner's system (network, for a real one): count its calls
    # apart from the console's own queries.
    asked: list[str] = []

    def owner_answers(self, fact_key):
        asked.append(fact_key)
        return AuthorityResult(status="ok", owner="eval-registry", source_revision="registry@r18")

    monkeypatch.setattr(SandboxAdapter, "authority", owner_answers)
    with django_assert_num_queries(LIST_QUERIES):
        response = auditor_browser.get("/facts/")
    assert response.status_code == 200
    assert sorted(asked) == sorted(f"baseline.eval-{index}" for index in range(keys))


def test_preloaded_sources_give_the_same_authority_source_as_a_fresh_query(registry):
    sources = authority_sources()
    for key in ("baseline.math-eval", "baseline.x", "other.key", "baseline"):
        expected = authority_source_for(key)
        assert authority_source_for(key, sources) == expected, key


# --- One fact key -----------------------------------------------------------------------------


def test_detail_shows_the_selection_and_the_history_newest_first(auditor_browser, settled, agent):
    remember(
        agent,
        settled,
        "reading-v19",
        "ckpt-0702",
        "registry@r18",
        valid_until="2026-12-31",
        supersedes="reading-v18",
    )
    page = auditor_browser.get(f"/facts/{settled}/?on=2026-09-30").content.decode()
    selection = page[page.index('id="selection"') :]
    assert '<span class="badge badge-green">ok</span>' in selection
    assert "ckpt-0702" in selection and 'href="#memory-reading-v19"' in selection
    history = page[page.index('id="history"') :]
    assert re.findall(r'<tr id="memory-([^"]+)"', history) == ["reading-v19", "reading-v18"]
    newer = history[history.index('id="memory-reading-v19"') :]
    assert '<a class="mono" href="#memory-reading-v18">reading-v18</a>' in newer
    older = history[history.index('id="memory-reading-v18"') :]
    assert '<span class="badge badge-amber">superseded</span>' in older
    assert '<a class="mono" href="#memory-reading-v19">reading-v19</a>' in older  # superseded by


def test_frozen_key_keeps_its_history_readable(auditor_browser, escalation):
    page = auditor_browser.get(f"/facts/{BASELINE}/").content.decode()
    assert 'id="frozen"' in page and escalation.escalation_id in page
    assert '<span class="badge badge-amber">authority ambiguous</span>' in page
    history = page[page.index('id="history"') :]
    assert len(re.findall(r'<tr id="memory-', history)) == 3
    for memory_id in escalation.candidate_refs:
        assert f'href="#memory-{memory_id}"' in page


def test_after_approval_the_key_is_settled_and_history_shows_the_retired(
    reviewer_browser, escalation
):
    reviewer_browser.post(
        f"/escalations/{escalation.escalation_id}/approve/",
        {"rationale": "registry confirms", "selected_ref": "math-eval-v18"},
    )
    page = reviewer_browser.get(f"/facts/{BASELINE}/?on=2026-09-30").content.decode()
    assert 'id="frozen"' not in page
    assert '<span class="badge badge-green">ok</span>' in page
    retired = page[page.index('id="memory-math-eval-v18b"') :]
    assert '<span class="badge badge-grey">historical only</span>' in retired
    assert MemoryRecord.objects.get(memory_id="math-eval-v18b").status == "historical_only"


@pytest.mark.parametrize("records", [1, 6])
def test_detail_query_count_is_fixed(
    auditor_browser, registry, agent, django_assert_num_queries, monkeypatch, records
):
    key = "baseline.many"
    authority(key)
    previous = None
    for index in range(records):
        extra = {"supersedes": previous} if previous else {}
        remember(agent, key, f"many-{index}", f"ckpt-{index}", "registry@r18", **extra)
        previous = f"many-{index}"
    monkeypatch.setattr(
        SandboxAdapter,
        "authority",
        lambda self, fact_key: AuthorityResult(
            status="ok", owner="eval-registry", source_revision="registry@r18"
        ),
    )
    with django_assert_num_queries(DETAIL_QUERIES):
        response = auditor_browser.get(f"/facts/{key}/")
    assert response.status_code == 200


def test_unknown_fact_key_is_404(auditor_browser, registry):
    assert auditor_browser.get("/facts/baseline.nothing/").status_code == 404


def test_an_ambiguous_key_nobody_escalated_yet_is_not_said_to_need_nobody(
    auditor_browser, registry, agent
):
    key = "baseline.audio-eval"
    authority(key)
    remember(agent, key, "audio-a", "ckpt-1", "registry@r18")
    remember(agent, key, "audio-b", "ckpt-2", "registry@r18")
    page = auditor_browser.get(f"/facts/{key}/").content.decode()
    assert '<span class="badge badge-amber">authority ambiguous</span>' in page
    assert not Escalation.objects.exists()  # people reading it opened none
    assert "never needed a person" not in page
    card = page[page.index('id="fact-escalations-h"') :]
    assert "an agent next asks for this key" in card[: card.index("</section>")]
