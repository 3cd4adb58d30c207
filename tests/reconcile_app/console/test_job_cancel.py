"""Cancelling a running bulk job from its console page (operators, with a reason)."""

from __future__ import annotations

from reconcile_app.models import AuditEvent, BulkJob, Effect
from reconcile_app.services.bulk_jobs import bulk_job_run
from tests.reconcile_app.console.test_bulk import (  # noqa: F401 (a fixture)
    ALL_UNKNOWN,
    REASON,
    confirm,
    three,
)


def test_an_operator_cancels_a_running_job_from_its_page(three, operator_browser, auditor_browser):
    confirm(operator_browser, {**ALL_UNKNOWN, "reason": REASON})
    job = BulkJob.objects.get()
    url = f"/jobs/{job.job_id}/"
    assert 'id="job-cancel-form"' in operator_browser.get(url).content.decode()
    assert 'id="job-cancel-form"' not in auditor_browser.get(url).content.decode()
    cancel = f"/jobs/{job.job_id}/cancel/"
    assert auditor_browser.post(cancel, {"reason": "x"}).status_code == 403

    refused = operator_browser.post(cancel, {"reason": ""}, follow=True)
    assert "needs a reason" in refused.content.decode()
    response = operator_browser.post(cancel, {"reason": "wrong action chosen"}, follow=True)

    page = response.content.decode()
    assert response.redirect_chain[-1][0] == url
    assert "cancelled: the rows it had not reached will not be acted on" in page
    assert 'data-status="cancelled"' in page and 'id="job-cancel-form"' not in page
    assert "Cancelled by <strong>" in page and "wrong action chosen" in page
    bulk_job_run(job_id=job.job_id)
    assert set(Effect.objects.values_list("status", flat=True)) == {"unknown"}
    assert AuditEvent.objects.get(action="bulk_job.cancel").reason == "wrong action chosen"
