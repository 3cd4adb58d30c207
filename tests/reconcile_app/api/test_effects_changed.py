"""GET /api/v1/effects?changed_after=&changed_before=: an incremental copy of the effects (a
data warehouse's, every few minutes) sees an effect again when it moved after it was copied.

`created_after` windows alone copy an effect once, in whatever state it was then: one copied
`accepted` (or `unknown`) stayed so in the copy after it was verified (or settled)."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from reconcile_app.canonical import rfc3339
from tests.conftest import COLLECTIONS, make_agent
from tests.reconcile_app.console.conftest import commit_effect, read_back


def keys(response: Any) -> set[str]:
    assert response.status_code == 200, response.content
    return {item["idempotency_key"] for item in response.json()["results"]}


def test_an_effect_that_moved_after_the_copy_is_listed_again(estate, agent, auditor):
    moved, still = commit_effect(agent, "ch-moved"), commit_effect(agent, "ch-still")
    assert moved.status == still.status == "accepted"
    copied = rfc3339(timezone.now())

    assert read_back(moved).status == "verified"
    fresh = commit_effect(agent, "ch-fresh")
    later = rfc3339(timezone.now())

    assert keys(auditor.get("/api/v1/effects", changed_after=copied)) == {
        moved.idempotency_key,
        fresh.idempotency_key,
    }
    # Committed before the copy: a window on the commit time alone never shows it again.
    assert moved.idempotency_key not in keys(auditor.get("/api/v1/effects", created_after=copied))
    # The window is [changed_after, changed_before), one event inside it: consecutive
    # windows cover every change once.
    assert keys(auditor.get("/api/v1/effects", changed_before=copied)) == {
        moved.idempotency_key,
        still.idempotency_key,
    }
    window = {"changed_after": copied, "changed_before": later}
    assert keys(auditor.get("/api/v1/effects", **window)) == {
        moved.idempotency_key,
        fresh.idempotency_key,
    }
    assert keys(auditor.get("/api/v1/effects", changed_after=later)) == set()
    listed = auditor.get("/api/v1/effects", changed_after=copied).json()["results"]
    assert {item["status"] for item in listed} == {"verified", "accepted"}


def test_an_agent_sees_only_its_own_changes(estate, agent, auditor):
    other = make_agent("other-agent", [f"{COLLECTIONS}:release_collections_hold"])
    since = rfc3339(timezone.now())
    mine, theirs = commit_effect(agent, "ch-mine"), commit_effect(other, "ch-theirs")

    assert keys(agent.get("/api/v1/effects", changed_after=since)) == {mine.idempotency_key}
    assert keys(other.get("/api/v1/effects", changed_after=since)) == {theirs.idempotency_key}
    assert len(keys(auditor.get("/api/v1/effects", changed_after=since))) == 2


@pytest.mark.parametrize("query", [{"changed_after": "yesterday"}, {"changed_before": "1"}])
def test_a_change_window_it_cannot_read_is_a_problem(auditor, query):
    response = auditor.get("/api/v1/effects", **query)

    assert response.status_code == 400, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    assert response.json()["code"] == "invalid_request"


@pytest.mark.parametrize("rows", [1, 6])
def test_a_change_window_costs_the_same_however_many_effects_moved(
    estate, agent, auditor, django_assert_num_queries, rows
):
    since = rfc3339(timezone.now())
    for n in range(rows):
        read_back(commit_effect(agent, f"ch-cost-{n}"))

    # Authentication (the key and its principal), the count and the page.
    with django_assert_num_queries(4):
        response = auditor.get("/api/v1/effects", changed_after=since, page_size=500)

    assert response.json()["count"] == rows
