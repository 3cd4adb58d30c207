"""Bulk resolve of contradictions at incident scale: "all N matching" pinned by detection
time, as the unknown-outcome queue is pinned by commit time."""

from __future__ import annotations

import html
import re
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from reconcile_app.models import BulkJob, Contradiction
from reconcile_app.services.bulk_jobs import bulk_job_run
from tests.reconcile_app.console.conftest import issue_snapshot

PREVIEW = "/contradictions/bulk/"
ALL_OPEN = {"do": "resolve", "scope": "filter", "status": "open"}
NOTE = "duplicate reports from the contact centre"
# session, user, groups, the rows (MAX_ITEMS + 1 of them), the sample.
PREVIEW_QUERIES = 5


def contradictions(agent: Any, count: int, start: int = 0) -> list[int]:
    """`count` open contradictions, one a second apart in detection time (oldest first)."""
    base = timezone.now() - timedelta(hours=1)
    ids = []
    for n in range(start, start + count):
        issue_snapshot(agent, subject=f"account-{n}", claimed="collect")
        row = Contradiction.objects.get(subject=f"account-{n}")
        Contradiction.objects.filter(pk=row.pk).update(detected_at=base + timedelta(seconds=n))
        ids.append(row.pk)
    return ids


def posted(page: str) -> dict[str, str]:
    form = re.search(r'<form method="post" id="bulk-confirm".*?</form>', page, re.S)
    assert form, page[:2000]
    fields = re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form.group(0))
    return {name: html.unescape(value) for name, value in fields}


def test_all_matching_beyond_one_job_takes_the_oldest_and_leaves_the_rest(
    estate, agent, operator_browser, monkeypatch
):
    monkeypatch.setattr("reconcile_app.selectors.bulk.MAX_ITEMS", 2)
    first, second, third = contradictions(agent, 3)

    preview = operator_browser.get(PREVIEW, ALL_OPEN)

    page = preview.content.decode()
    assert preview.status_code == 200, page[:2000]
    assert '<span class="count" id="bulk-count">2</span>' in page
    assert "The oldest 2 of the 3 matching rows, detected before" in page
    response = operator_browser.post(PREVIEW, {**posted(page), "reason": NOTE})
    assert response.status_code == 302, response.content.decode()[:2000]
    job = BulkJob.objects.get()
    assert list(job.items.order_by("position").values_list("ref", flat=True)) == [
        str(first),
        str(second),
    ]
    bulk_job_run(job_id=job.job_id)
    rest = operator_browser.get(PREVIEW, ALL_OPEN).content.decode()
    assert '<span class="count" id="bulk-count">1</span>' in rest
    assert 'id="bulk-batch"' not in rest
    assert list(Contradiction.objects.filter(status="open").values_list("pk", flat=True)) == [third]


def test_ticked_contradictions_beyond_one_job_are_still_refused(
    estate, agent, operator_browser, monkeypatch
):
    monkeypatch.setattr("reconcile_app.selectors.bulk.MAX_ITEMS", 2)
    ids = contradictions(agent, 3)
    response = operator_browser.get(PREVIEW, {"do": "resolve", "scope": "selected", "id": ids})
    assert response.status_code == 400
    assert 'data-code="selection_too_large"' in response.content.decode()


def test_a_contradiction_detected_while_the_preview_is_read_does_not_join_the_job(
    estate, agent, operator_browser
):
    contradictions(agent, 2)
    page = operator_browser.get(PREVIEW, ALL_OPEN).content.decode()
    assert 'id="bulk-pinned"' in page and "Only rows detected before" in page
    issue_snapshot(agent, subject="account-late", claimed="collect")  # detected now

    response = operator_browser.post(PREVIEW, {**posted(page), "reason": NOTE})

    assert response.status_code == 302, response.content.decode()[:2000]
    job = BulkJob.objects.get()
    assert job.count == 2
    assert job.selection["filter"]["detected_before"]


@pytest.mark.parametrize("count", [2, 12])
def test_the_preview_query_count_does_not_grow_with_the_selection(
    estate, agent, operator_browser, django_assert_num_queries, count
):
    contradictions(agent, count)
    with django_assert_num_queries(PREVIEW_QUERIES):
        response = operator_browser.get(PREVIEW, ALL_OPEN)
    assert response.status_code == 200


def test_the_list_and_the_api_narrow_contradictions_by_detection_time(
    estate, agent, operator, operator_browser
):
    early = contradictions(agent, 2)
    cut = Contradiction.objects.get(pk=early[-1]).detected_at
    later = contradictions(agent, 2, start=2)

    listed = operator.get("/api/v1/contradictions", detected_after=cut.isoformat()).json()
    assert sorted(row["id"] for row in listed["results"]) == sorted([early[-1], *later])
    before = operator.get("/api/v1/contradictions", detected_before=cut.isoformat()).json()
    assert [row["id"] for row in before["results"]] == [early[0]]
    page = operator_browser.get("/contradictions/", {"detected_before": cut.isoformat()})
    assert page.content.decode().count('class="bulk-pick"') == 1

    started = operator.post(
        "/api/v1/contradictions/bulk",
        {"filter": {"status": "open", "detected_before": cut.isoformat()}, "note": NOTE},
    )
    assert started.status_code == 202, started.content
    assert started.json()["count"] == 1


def test_a_batch_whose_oldest_rows_share_the_boundary_instant_is_refused_not_empty(
    estate, agent, operator_browser, monkeypatch
):
    # One snapshot's contradictions share its issue time: three at one instant cannot be
    # split by time, and an empty batch would say "nothing matches" of a queue too deep.
    monkeypatch.setattr("reconcile_app.selectors.bulk.MAX_ITEMS", 2)
    contradictions(agent, 3)
    Contradiction.objects.update(detected_at=timezone.now() - timedelta(minutes=5))

    response = operator_browser.get(PREVIEW, ALL_OPEN)

    assert response.status_code == 400
    assert 'data-code="selection_too_large"' in response.content.decode()
