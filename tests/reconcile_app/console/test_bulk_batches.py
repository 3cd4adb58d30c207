"""Bulk triage beyond one job: "all N matching" on a queue deeper than a job takes."""

from __future__ import annotations

import html
import re

from reconcile_app.models import BulkJob
from reconcile_app.services.bulk_jobs import bulk_job_run
from tests.conftest import ago
from tests.reconcile_app.console.test_bulk import (  # noqa: F401 (a fixture)
    ALL_UNKNOWN,
    PREVIEW,
    REASON,
    three,
)


def test_all_matching_beyond_one_job_takes_the_oldest_and_leaves_the_rest(
    three, operator_browser, monkeypatch
):
    # One job takes at most MAX_ITEMS rows (1,000); an outage queues more than that.
    monkeypatch.setattr("reconcile_app.selectors.bulk.MAX_ITEMS", 2)
    asked = {**ALL_UNKNOWN, "do": "not_executed"}
    preview = operator_browser.get(PREVIEW, asked)
    assert preview.status_code == 200
    page = preview.content.decode()
    assert '<span class="count" id="bulk-count">2</span>' in page
    assert 'id="bulk-batch"' in page and "The oldest 2 of the 3 matching rows" in page
    assert 'href="/effects/u-0/"' in page and 'href="/effects/u-1/"' in page
    assert 'href="/effects/u-2/"' not in page

    # The form posts what the preview drew: its hidden fields carry the pin.
    form = re.search(r'<form method="post" id="bulk-confirm".*?</form>', page, re.S)
    assert form
    fields = re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form.group(0))
    posted = {name: html.unescape(value) for name, value in fields}
    response = operator_browser.post(PREVIEW, {**posted, "reason": REASON})
    assert response.status_code == 302
    job = BulkJob.objects.get()
    assert list(job.items.order_by("position").values_list("ref", flat=True)) == ["u-0", "u-1"]
    bulk_job_run(job_id=job.job_id)
    # The next preview takes what this job left, as one job.
    rest = operator_browser.get(PREVIEW, asked).content.decode()
    assert '<span class="count" id="bulk-count">1</span>' in rest
    assert 'href="/effects/u-2/"' in rest and 'id="bulk-batch"' not in rest


def test_ticked_rows_beyond_one_job_are_still_refused(three, operator_browser, monkeypatch):
    monkeypatch.setattr("reconcile_app.selectors.bulk.MAX_ITEMS", 2)
    response = operator_browser.get(
        PREVIEW, {"do": "readback", "scope": "selected", "key": ["u-0", "u-1", "u-2"]}
    )
    assert response.status_code == 400
    assert 'data-code="selection_too_large"' in response.content.decode()


def test_a_batch_whose_boundary_ties_with_every_older_row_says_so_not_nothing_matched(
    three, operator_browser, monkeypatch
):
    """Rows committed in one instant (a restored or bulk-loaded queue) cannot be split by
    commit time: the batch before the first row left out would be empty. The preview said
    "nothing matches this selection" of a queue of 3; the limit is what stands in the way."""
    from reconcile_app.models import Effect

    Effect.objects.filter(idempotency_key__in=three).update(created_at=ago(minutes=5))
    monkeypatch.setattr("reconcile_app.selectors.bulk.MAX_ITEMS", 2)
    response = operator_browser.get(PREVIEW, {**ALL_UNKNOWN, "do": "not_executed"})
    page = response.content.decode()
    assert 'data-code="nothing_matched"' not in page
    assert (response.status_code, 'data-code="selection_too_large"' in page) == (400, True)
    assert not BulkJob.objects.exists()
