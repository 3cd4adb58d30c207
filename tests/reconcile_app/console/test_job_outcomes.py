"""A bulk job's page says how each row ended: a re-check the owner could not settle is
"still unknown", its own outcome, not a failure of the job."""

from __future__ import annotations

from reconcile_app.models import BulkJob, Effect
from reconcile_app.services.bulk_jobs import bulk_job_run
from sandbox_app.services import sandbox_fault_add
from tests.reconcile_app.console.test_bulk import (  # noqa: F401 (a fixture)
    ALL_UNKNOWN,
    JOB_QUERIES,
    REASON,
    confirm,
    three,
)


def test_a_recheck_left_unknown_shows_as_still_unknown_not_failed(
    three, operator_browser, auditor_browser, django_assert_num_queries
):
    sandbox_fault_add(source="case-service", kind="unavailable")
    confirm(operator_browser, {**ALL_UNKNOWN, "reason": REASON})
    job = BulkJob.objects.get()
    bulk_job_run(job_id=job.job_id)

    with django_assert_num_queries(JOB_QUERIES):
        page = auditor_browser.get(f"/jobs/{job.job_id}/").content.decode()

    assert '<strong id="job-failed">0</strong>' in page
    assert '<span id="job-still-unknown">3</span> still unknown after the re-check' in page
    assert page.count('data-state="still_unknown"') == 3
    assert page.count('<span class="badge badge-amber">still unknown</span>') == 3
    assert 'data-state="failed"' not in page
    assert set(Effect.objects.values_list("status", flat=True)) == {"unknown"}
