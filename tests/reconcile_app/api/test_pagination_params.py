"""A list's `page` and `page_size` that cannot be a page are 400, not a page past the end (404)
nor the default page size: a copying loop reads 404 as "done" and would stop having copied
nothing (docs/api.md, "Copying records incrementally")."""

from __future__ import annotations

import pytest

LISTS = ["/api/v1/effects", "/api/v1/snapshots", "/api/v1/audit", "/api/v1/escalations"]


@pytest.mark.parametrize("path", LISTS)
@pytest.mark.parametrize(
    "query",
    [
        {"page": "0"},
        {"page": "abc"},
        {"page": "-1"},
        {"page": "1.5"},
        {"page_size": "0"},
        {"page_size": "x"},
        {"page_size": "-5"},
    ],
)
def test_a_page_that_cannot_be_one_is_a_bad_request(auditor, path, query):
    response = auditor.get(path, **query)

    assert response.status_code == 400, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    assert response.json()["code"] == "invalid_request"
    assert set(response.json()["errors"]) == set(query)


@pytest.mark.parametrize("path", LISTS)
def test_a_page_past_the_end_is_still_not_found(auditor, path):
    response = auditor.get(path, page="99")

    assert response.status_code == 404, response.content
    assert response.json()["code"] == "not_found"


def test_a_large_page_size_is_still_served_as_the_largest(auditor):
    response = auditor.get("/api/v1/audit", page_size="100000", page="last")

    assert response.status_code == 200, response.content
    assert response.json()["count"] == len(response.json()["results"])
