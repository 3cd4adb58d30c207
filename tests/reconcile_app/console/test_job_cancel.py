"""A bulk job at incident scale: cancelled from its page, and "all N matching" pinned to the
rows its preview showed while new ones arrive."""

from __future__ import annotations

import json
import re

from reconcile_app.models import AuditEvent, BulkJob, Effect
from reconcile_app.services.bulk_jobs import bulk_job_run
from tests.reconcile_app.console.test_bulk import (  # noqa: F401 (a fixture)
    ALL_UNKNOWN,
    PREVIEW,
    REASON,
    confirm,
    three,
    unknowns,
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


def hidden_fields(page: str) -> dict[str, str]:
    """Every hidden field of the preview's form, as a browser posts them."""
    return dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', page))


def test_rows_arriving_after_the_preview_do_not_refuse_its_confirmation(
    estate, agent, operator_browser
):
    """In an outage new unknowns keep arriving: "all N matching" acts on the rows the
    preview showed (committed before it was drawn) instead of refusing every confirmation."""
    unknowns(agent, 3)
    preview = operator_browser.get(PREVIEW, ALL_UNKNOWN).content.decode()
    assert 'id="bulk-pinned"' in preview
    unknowns(agent, 2, start=3)  # two more arrive while the operator reads

    response = operator_browser.post(
        PREVIEW, {**hidden_fields(preview), "reason": REASON, "do": "readback"}
    )

    assert response.status_code == 302, response.content.decode()[:2000]
    job = BulkJob.objects.get()
    assert sorted(item.ref for item in job.items.all()) == ["u-0", "u-1", "u-2"]
    assert job.selection["filter"]["created_before"]


def test_the_api_narrows_an_outage_by_commit_time(estate, agent, operator):
    early = unknowns(agent, 2)
    cut = Effect.objects.get(idempotency_key=early[-1]).created_at
    later = unknowns(agent, 2, start=2)

    listed = operator.get("/api/v1/effects", created_after=cut.isoformat()).json()
    assert sorted(row["idempotency_key"] for row in listed["results"]) == sorted(
        [early[-1], *later]
    )
    started = operator.post(
        "/api/v1/effects/bulk",
        {
            "filter": {"status": "unknown", "created_before": cut.isoformat()},
            "action": "readback",
            "reason": REASON,
        },
    )
    assert started.status_code == 202, started.content
    assert started.json()["count"] == 1


def test_a_list_bound_later_than_the_preview_is_pinned_to_the_preview(
    estate, agent, operator_browser
):
    unknowns(agent, 2)
    later = "2999-01-01T00:00:00+00:00"
    preview = operator_browser.get(PREVIEW, {**ALL_UNKNOWN, "created_before": later})
    page = preview.content.decode()
    unknowns(agent, 1, start=2)

    response = operator_browser.post(
        PREVIEW, {**hidden_fields(page), "reason": REASON, "do": "readback"}
    )

    assert response.status_code == 302
    assert BulkJob.objects.get().count == 2


def test_a_previewed_at_that_is_no_instant_is_ignored_not_a_500(three, operator_browser):
    response = operator_browser.get(
        PREVIEW, {**ALL_UNKNOWN, "previewed_at": "2026-02-30T00:00:00+00:00"}
    )
    assert response.status_code == 200
    assert '<span class="count" id="bulk-count">3</span>' in response.content.decode()


def test_the_poll_that_finds_the_job_ended_takes_its_cancel_form_away(three, operator_browser):
    """The form lies outside the polled region: it stayed, offering to cancel a job that had
    ended, until the page was reloaded."""
    confirm(operator_browser, {**ALL_UNKNOWN, "reason": REASON})
    job = BulkJob.objects.get()
    url = f"/jobs/{job.job_id}/"
    poll = {"HTTP_HX_REQUEST": "true"}
    assert 'hx-swap-oob="delete"' not in operator_browser.get(url, **poll).content.decode()

    bulk_job_run(job_id=job.job_id)

    region = operator_browser.get(url, **poll).content.decode()
    assert '<div id="job-cancel-form" hx-swap-oob="delete"></div>' in region
    page = operator_browser.get(url).content.decode()
    assert 'id="job-cancel-form"' not in page  # a full page draws no form, and no stray div


def test_the_poll_that_finds_the_job_ended_tells_a_screen_reader(three, operator_browser):
    """The polled region is replaced whole every few seconds and carried no live region: a
    screen reader heard nothing when the job ended. The poll that finds it ended carries a
    console message, which the page says in its polite live region (messages.js)."""
    confirm(operator_browser, {**ALL_UNKNOWN, "reason": REASON})
    job = BulkJob.objects.get()
    url = f"/jobs/{job.job_id}/"
    poll = {"HTTP_HX_REQUEST": "true"}
    assert "HX-Trigger" not in operator_browser.get(url, **poll)

    bulk_job_run(job_id=job.job_id)

    ended = operator_browser.get(url, **poll)
    assert json.loads(ended["HX-Trigger"])["console-message"] == {
        "level": "success",
        "text": "Job done: 3 of 3 processed, 0 failed.",
    }
    assert "HX-Trigger" not in operator_browser.get(url), "a page load announces nothing"
