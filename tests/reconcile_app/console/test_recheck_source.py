"""The quarantine page's "Re-check unknown…" on each source's row, as an operator after an
outage expects it: the count of unknown outcomes against that source, a link to the bulk
preview of exactly those, and held (disabled, saying why) while the source is quarantined."""

from __future__ import annotations

import re
from typing import Any

import pytest

from reconcile_app.models import Source
from reconcile_app.services.quarantine import quarantine_create
from tests.reconcile_app.console.conftest import commit_effect
from tests.reconcile_app.console.quarantine_steps import PAGE_QUERIES, ROW_QUERIES

CASE = "case-service"
LINK = (
    'href="/bulk/effects/?do=readback&amp;scope=filter&amp;status=unknown&amp;source=case-service"'
)


def source_row(html: str, name: str) -> str:
    match = re.search(rf'<tr id="target-source-{name}".*?</tr>', html, re.S)
    assert match, f"no row for source {name}"
    return match.group(0)


@pytest.fixture
def outage(estate: Any, agent: Any) -> None:
    """Two effects against case-service whose answers were lost."""
    for n in range(2):
        assert commit_effect(agent, f"o-{n}", fault="timeout_after_commit").status == "unknown"


def test_a_source_with_unknown_outcomes_offers_to_recheck_them_with_their_count(
    outage, operator_browser
):
    row = source_row(operator_browser.get("/quarantine/").content.decode(), CASE)
    assert LINK in row
    assert "Re-check 2 unknown…" in row
    assert 'data-unknown="2"' in row and "disabled" not in row
    # The link leads to a preview of exactly those two.
    preview = operator_browser.get(
        "/bulk/effects/?do=readback&scope=filter&status=unknown&source=case-service"
    )
    assert preview.status_code == 200
    assert preview.context["selection"].count == 2


def test_a_source_with_nothing_unknown_shows_the_button_disabled_and_says_why(
    estate, operator_browser
):
    row = source_row(operator_browser.get("/quarantine/").content.decode(), CASE)
    assert LINK not in row
    assert re.search(r"<button[^>]*recheck-source[^>]*disabled", row)
    assert "no effect against this source has an unknown outcome" in row


def test_a_quarantined_source_holds_its_recheck_and_explains(outage, operator, operator_browser):
    quarantine_create(scope="source", target=CASE, reason="owner outage", actor=operator.user)
    row = source_row(operator_browser.get("/quarantine/").content.decode(), CASE)
    assert LINK not in row
    assert re.search(r"<button[^>]*recheck-source[^>]*disabled", row)
    assert "2 unknown; case-service is quarantined" in row
    assert "held until it is lifted" in row
    # The row's own refresh says the same.
    row = operator_browser.get(f"/quarantine/targets/source/{CASE}/").content.decode()
    assert LINK not in row and "case-service is quarantined" in row


def test_readers_see_no_recheck_button(outage, auditor_browser):
    assert "recheck-source" not in auditor_browser.get("/quarantine/").content.decode()


@pytest.mark.parametrize("extra_sources", [0, 5])
def test_the_page_costs_the_same_however_many_sources_are_listed(
    outage, operator, operator_browser, django_assert_num_queries, extra_sources
):
    # A history row, so the page reads its history page as quarantine_steps counts it.
    quarantine_create(scope="memory_class", target="episodic", reason="r", actor=operator.user)
    template = Source.objects.get(name=CASE)
    for n in range(extra_sources):
        Source.objects.create(
            name=f"ledger-{n}",
            owner="ops",
            adapter=template.adapter,
            consistency=template.consistency,
            fact_classes=[],
            document={},
        )
    with django_assert_num_queries(PAGE_QUERIES):
        html = operator_browser.get("/quarantine/").content.decode()
    assert html.count("recheck-source") == Source.objects.count()
    with django_assert_num_queries(ROW_QUERIES):
        row = operator_browser.get(f"/quarantine/targets/source/{CASE}/").content.decode()
    assert "Re-check 2 unknown…" in row
