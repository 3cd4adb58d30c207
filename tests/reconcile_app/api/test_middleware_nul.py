"""A NUL in a path or query string is refused before any view runs, on the console's pages as
on the API (reconcile_app/api/middleware.py): PostgreSQL cannot compare a string holding NUL,
so it reached the database as a 500."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    "url",
    [
        "/contracts/collections-contact-release/%00/",
        "/contracts/collections-contact-release/7.3%00/release/",
        "/contracts/%00/diff/",
        "/snapshots/snap_%00/",
        "/effects/%00/",
        "/lineage/?node=%00",
    ],
)
def test_a_nul_in_a_console_path_or_query_is_a_400_on_every_database(estate, operator, url):
    # The console's pages were not covered: each of these answered 500 on PostgreSQL.
    response = operator.client.get(url)

    assert response.status_code == 400, response.content
    assert b"NUL character" in response.content
