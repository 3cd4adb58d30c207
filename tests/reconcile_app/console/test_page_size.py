"""The page size a URL asks for (`?per_page=`, read by django-tables2): never a server error,
never every row of a queue in one page."""

from __future__ import annotations

import re

import pytest

from reconcile_app.console.tables.common import MAX_PER_PAGE
from reconcile_app.services.audit import audit_record

LISTS = [
    "/",
    "/snapshots/",
    "/contradictions/",
    "/escalations/",
    "/promotions/",
    "/effects/",
    "/facts/",
    "/quarantine/",
    "/audit/",
    "/drills/",
]


@pytest.mark.parametrize("asked", ["-1", "0", "abc"])
@pytest.mark.parametrize("path", LISTS)
def test_a_page_size_below_one_or_not_a_number_shows_a_page(operator_browser, path, asked):
    assert operator_browser.get(path, {"per_page": asked}).status_code == 200


def test_a_page_holds_at_most_max_per_page_rows_whatever_the_url_asks(auditor_browser, operator):
    for index in range(MAX_PER_PAGE + 5):
        audit_record(
            actor=operator.user, action="test.step", object_kind="test", object_ref=str(index)
        )
    page = auditor_browser.get(
        "/audit/", {"action": "test.step", "per_page": "99999999999999999999"}
    ).content.decode()
    assert len(re.findall(r'<tr id="audit-\d+"', page)) == MAX_PER_PAGE
    assert f"1\N{EN DASH}{MAX_PER_PAGE} of {MAX_PER_PAGE + 5}" in page
    # A smaller size is the reader's to ask for.
    small = auditor_browser.get("/audit/", {"action": "test.step", "per_page": "3"})
    assert "1\N{EN DASH}3 of" in small.content.decode()
