"""Blast-radius reports: a reducer version, a source version range, a memory class, a node."""

from __future__ import annotations

import re

import pytest

from lineage_app.choices import Relation
from lineage_app.services.graph import Link, graph_record
from reconcile_app.console.mixins import PER_PAGE
from tests.reconcile_app.lineage_chain import (  # noqa: F401 (fixtures)
    chain,
    collectible,
)
from tests.reconcile_app.reducers.test_hardship import (  # noqa: F401 (fixtures, a helper)
    ledger,
    letters_agent,
)
from tests.reconcile_app.reducers.test_hardship import (
    reconcile as reconcile_letter,
)

# session, user, the user's groups, the entry point's roots, the counts by kind with one
# page of nodes (two statements), and the page's objects (none when the page is empty).
REPORT_QUERIES = 7


def rows(page: str) -> list[str]:
    """The node ids listed, in order."""
    table = re.search(r'<table [^>]*id="blast-list".*?</table>', page, re.S)
    assert table, "no list"
    return re.findall(r'<tr data-node="([^"]+)"', table.group(0))


def tab_counts(page: str) -> dict[str, int]:
    return {
        kind: int(count)
        for kind, count in re.findall(
            r'data-kind="(\w+)">\w+ <span class="tab-count">(\d+)</span>', page
        )
    }


def test_reducer_version_lists_the_snapshots_it_generated(ledger, letters_agent, operator_browser):
    ledger("acct-1", "PaymentMissed", "PaymentMissed")
    snapshot = reconcile_letter(letters_agent, "acct-1")
    page = operator_browser.get("/lineage/blast-radius/?reducer=hardship@3").content.decode()
    assert 'Blast radius of <span class="mono">reducer hardship@3</span>' in page
    assert rows(page) == [f"snapshot:{snapshot['snapshot_id']}"]
    assert f'href="/snapshots/{snapshot["snapshot_id"]}/"' in page
    assert '<span class="badge badge-green">allow</span>' in page
    assert tab_counts(page) == {"snapshot": 1, "decision": 1, "effect": 0, "memory": 0}
    decisions = operator_browser.get(
        "/lineage/blast-radius/?reducer=hardship@3&kind=decision"
    ).content.decode()
    assert rows(decisions) == [f"decision:{snapshot['snapshot_id'].replace('snap_', 'dec_')}"]
    assert f'href="/snapshots/{snapshot["snapshot_id"]}/"' in decisions


def test_source_version_range_reaches_effects_and_memories(chain, operator_browser):
    base = "/lineage/blast-radius/?source=case-service&from_version=40&to_version=42"
    page = operator_browser.get(base).content.decode()
    assert "case-service versions 40 to 42" in page
    assert tab_counts(page)["effect"] == 1
    effects = operator_browser.get(base + "&kind=effect").content.decode()
    assert rows(effects) == ["effect:l-1"]
    assert 'href="/effects/l-1/"' in effects
    assert '<span class="badge badge-green">verified</span>' in effects
    memories = operator_browser.get(base + "&kind=memory").content.decode()
    assert rows(memories) == [f"memory:{chain.memory_id}"]
    # Versions outside the range reach nothing.
    empty = operator_browser.get(
        "/lineage/blast-radius/?source=case-service&from_version=43"
    ).content.decode()
    assert 'id="no-roots"' in empty and tab_counts(empty)["snapshot"] == 0


def test_memory_class_lists_what_its_memories_fed(chain, operator_browser):
    graph_record(
        [Link(f"memory:{chain.memory_id}", "snapshot:snap_later", Relation.USED)],
    )
    page = operator_browser.get("/lineage/blast-radius/?memory_class=episodic").content.decode()
    assert "memory class episodic" in page
    # A node whose object is not in this database still lists, with its id.
    assert rows(page) == ["snapshot:snap_later"]


def test_any_node_is_an_entry_point(chain, operator_browser):
    page = operator_browser.get(
        "/lineage/blast-radius/?node=evidence:ev-collect&kind=memory"
    ).content.decode()
    assert set(rows(page)) == {f"memory:{chain.memory_id}", f"memory:{chain.fact_memory_id}"}
    # Every memory opens its own page, a fact record too (which links its fact).
    assert f'href="/memories/{chain.fact_memory_id}/"' in page
    assert f'href="/memories/{chain.memory_id}/"' in page


def test_without_an_entry_point_the_page_asks_for_one(operator_browser, db):
    page = operator_browser.get("/lineage/blast-radius/").content.decode()
    assert 'id="blast-entry"' in page and 'id="blast-list"' not in page


@pytest.fixture
def bulk(db):
    """A reducer version behind 60 snapshots (lineage only: enough to page through)."""
    graph_record(
        [
            Link("reducer:bulk@1", f"snapshot:snap_{index:04d}", Relation.WAS_GENERATED_BY)
            for index in range(60)
        ]
    )


def test_lists_are_paginated(bulk, operator_browser):
    pages = [
        operator_browser.get(
            f"/lineage/blast-radius/?reducer=bulk@1&page={number}"
        ).content.decode()
        for number in (1, 2, 3)
    ]
    listed = [rows(page) for page in pages]
    assert [len(nodes) for nodes in listed] == [PER_PAGE, PER_PAGE, 60 - 2 * PER_PAGE]
    everything = sorted(node for nodes in listed for node in nodes)
    assert everything == [f"snapshot:snap_{index:04d}" for index in range(60)]
    assert "26\N{EN DASH}50 of 60" in pages[1]
    assert 'href="?reducer=bulk%401&amp;page=3"' in pages[1]
    # Past the end: the last page.
    beyond = operator_browser.get("/lineage/blast-radius/?reducer=bulk@1&page=9").content
    assert rows(beyond.decode()) == listed[2]


@pytest.mark.parametrize("asked", ["99999999999999999999", str(2**62)])
def test_a_page_number_past_any_offset_shows_the_last_page(bulk, operator_browser, asked):
    response = operator_browser.get(f"/lineage/blast-radius/?reducer=bulk@1&page={asked}")
    assert response.status_code == 200
    assert len(rows(response.content.decode())) == 60 - 2 * PER_PAGE


def test_tabs_and_pages_swap_the_region_only(bulk, operator_browser):
    response = operator_browser.get(
        "/lineage/blast-radius/?reducer=bulk@1&page=2", HTTP_HX_REQUEST="true"
    )
    page = response.content.decode()
    assert page.lstrip().startswith('<section id="blast-region"')
    assert "<html" not in page
    assert "HX-Request" in response["Vary"]


def test_report_query_count_is_pinned(chain, bulk, operator_browser, django_assert_num_queries):
    for url in (
        "/lineage/blast-radius/?reducer=bulk@1",
        "/lineage/blast-radius/?reducer=bulk@1&page=2",
        "/lineage/blast-radius/?source=case-service&from_version=1&to_version=99&kind=effect",
        f"/lineage/blast-radius/?node=snapshot:{chain.snapshot_id}&kind=decision",
        "/lineage/blast-radius/?node=evidence:ev-collect&kind=memory",
    ):
        with django_assert_num_queries(REPORT_QUERIES):
            assert operator_browser.get(url).status_code == 200, url


@pytest.mark.parametrize("persona", ["reviewer_browser", "auditor_browser"])
def test_every_role_may_read_a_report(chain, persona, request):
    client = request.getfixturevalue(persona)
    assert client.get("/lineage/blast-radius/?reducer=hardship@3").status_code == 200
