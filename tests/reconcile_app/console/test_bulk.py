"""Bulk triage in the console: pick rows, preview, confirm, follow the job."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from reconcile_app.models import AuditEvent, BulkJob, Contradiction, Effect
from reconcile_app.services.bulk_jobs import bulk_job_run
from tests.reconcile_app.console.conftest import commit_effect

REASON = "owner outage 09:00-09:20"
PREVIEW = "/bulk/effects/"
ALL_UNKNOWN = {"do": "readback", "scope": "filter", "status": "unknown"}
# session, user, groups (operator check), the selection's keys, the sample rows.
PREVIEW_QUERIES = 5
# session, user, groups, the job, the items' count, the page of items.
JOB_QUERIES = 6


def fingerprint_of(page: str) -> dict[str, str]:
    """The preview's fingerprint field, as its form would post it (none without rows)."""
    found = re.search(r'<input type="hidden" name="fingerprint" value="([0-9a-f]+)">', page)
    return {"fingerprint": found.group(1)} if found else {}


def confirm(browser: Client, data: dict[str, Any], url: str = PREVIEW, **extra: Any) -> Any:
    """Open the preview, then post its form: what an operator's browser does."""
    shown = {name: value for name, value in data.items() if name not in ("reason", "confirm")}
    preview = browser.get(url, shown).content.decode()
    return browser.post(url, {**data, **fingerprint_of(preview)}, **extra)


def unknowns(agent: Any, count: int, start: int = 0) -> list[str]:
    return [
        commit_effect(agent, f"u-{n}", fault="timeout_after_commit").idempotency_key
        for n in range(start, start + count)
    ]


@pytest.fixture
def three(estate: Any, agent: Any) -> list[str]:
    return unknowns(agent, 3)


def test_operators_pick_rows_on_the_unknown_queue(three, operator_browser, auditor_browser):
    page = operator_browser.get("/effects/").content.decode()
    assert page.count('class="bulk-pick"') == 3
    assert 'value="u-0" form="bulk-form"' in page
    assert 'id="bulk-form"' in page
    assert re.search(r'<strong id="bulk-matching">3</strong>', page)
    assert '<input type="hidden" name="status" value="unknown">' in page
    # Auditors see the queue, not the levers; settled tabs have nothing to pick.
    assert "bulk-pick" not in auditor_browser.get("/effects/").content.decode()
    assert "bulk-form" not in operator_browser.get("/effects/?status=verified").content.decode()


def test_preview_shows_the_count_a_sample_and_asks_for_a_reason(three, operator_browser):
    response = operator_browser.get(PREVIEW, ALL_UNKNOWN)
    assert response.status_code == 200
    page = response.content.decode()
    assert '<span class="count" id="bulk-count">3</span>' in page
    assert page.count('id="effect-') == 3
    assert 'name="reason"' in page and "csrfmiddlewaretoken" in page
    # Three rows: no typed confirmation.
    assert 'name="confirm"' not in page
    assert not BulkJob.objects.exists()


def test_preview_query_count_does_not_grow_with_the_selection(
    estate, agent, operator_browser, django_assert_num_queries
):
    unknowns(agent, 2)
    with django_assert_num_queries(PREVIEW_QUERIES):
        operator_browser.get(PREVIEW, ALL_UNKNOWN)
    unknowns(agent, 12, start=2)
    with django_assert_num_queries(PREVIEW_QUERIES):
        page = operator_browser.get(PREVIEW, ALL_UNKNOWN).content.decode()
    assert '<span class="count" id="bulk-count">14</span>' in page
    assert page.count('id="effect-') == 10  # the sample
    assert 'name="confirm"' in page and 'pattern="14"' in page


def test_confirming_starts_one_job_and_opens_its_page(three, operator_browser):
    response = confirm(
        operator_browser, {**ALL_UNKNOWN, "reason": REASON}, HTTP_X_REQUEST_ID="req-console-7"
    )
    job = BulkJob.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/jobs/{job.job_id}/"
    assert (job.count, job.action, job.reason, job.request_id) == (
        3,
        "readback",
        REASON,
        "req-console-7",
    )
    assert AuditEvent.objects.get(action="bulk_job.create").request_id == "req-console-7"


def test_ticked_rows_only(three, operator_browser):
    confirm(
        operator_browser,
        {"do": "not_executed", "scope": "selected", "key": ["u-0", "u-2"], "reason": REASON},
    )
    job = BulkJob.objects.get()
    assert (job.action, job.outcome, list(job.items.values_list("ref", flat=True))) == (
        "resolve",
        "not_executed",
        ["u-0", "u-2"],
    )


@pytest.mark.parametrize(
    ("data", "code"),
    [
        ({**ALL_UNKNOWN, "reason": ""}, "reason_required"),
        ({**ALL_UNKNOWN, "do": "explode", "reason": REASON}, "invalid_action"),
        ({"do": "readback", "scope": "selected", "reason": REASON}, "nothing_matched"),
        ({**ALL_UNKNOWN, "status": "verified", "reason": REASON}, "nothing_matched"),
    ],
)
def test_a_refused_confirmation_says_why_and_starts_nothing(three, operator_browser, data, code):
    response = confirm(operator_browser, data)
    assert response.status_code == 400
    assert f'data-code="{code}"' in response.content.decode()
    assert not BulkJob.objects.exists()


def test_above_the_threshold_the_count_must_be_typed(estate, agent, operator_browser):
    unknowns(agent, 11)
    refused = confirm(operator_browser, {**ALL_UNKNOWN, "reason": REASON, "confirm": "10"})
    assert refused.status_code == 400
    page = refused.content.decode()
    assert 'data-code="confirmation_mismatch"' in page
    assert REASON in page  # the reason survives the refusal
    assert not BulkJob.objects.exists()
    accepted = confirm(operator_browser, {**ALL_UNKNOWN, "reason": REASON, "confirm": "11"})
    assert accepted.status_code == 302
    assert BulkJob.objects.get().count == 11


def test_only_operators_reach_the_preview(three, auditor_browser, reviewer_browser):
    assert auditor_browser.get(PREVIEW, ALL_UNKNOWN).status_code == 403
    assert reviewer_browser.post(PREVIEW, {**ALL_UNKNOWN, "reason": REASON}).status_code == 403
    assert Client().get(PREVIEW, ALL_UNKNOWN).status_code == 302  # to sign-in


def test_the_job_page_polls_while_running_and_stops_when_done(
    three, operator_browser, auditor_browser, django_assert_num_queries
):
    confirm(operator_browser, {**ALL_UNKNOWN, "reason": REASON})
    job = BulkJob.objects.get()
    url = f"/jobs/{job.job_id}/"

    with django_assert_num_queries(JOB_QUERIES):
        page = auditor_browser.get(url).content.decode()
    assert 'data-status="running"' in page and 'hx-trigger="every 2s"' in page
    assert f'hx-get="{url}?polls=1"' in page
    assert page.count('data-state="pending"') == 3

    bulk_job_run(job_id=job.job_id)
    with django_assert_num_queries(JOB_QUERIES):
        partial = operator_browser.get(url, {"polls": "1"}, HTTP_HX_REQUEST="true")
    body = partial.content.decode()
    assert body.lstrip().startswith('<section id="job-region"')
    assert 'data-status="done"' in body and "hx-trigger" not in body
    assert '<strong id="job-done">3</strong>' in body
    assert body.count('data-state="done"') == 3
    assert set(Effect.objects.values_list("status", flat=True)) == {"verified"}


@pytest.mark.parametrize(("asked", "shown"), [("abc", 1), ("0", 1), ("99", 1), ("-1", 1)])
def test_a_mistyped_page_number_shows_a_real_page(three, operator_browser, asked, shown):
    confirm(operator_browser, {**ALL_UNKNOWN, "reason": REASON})
    job = BulkJob.objects.get()
    response = operator_browser.get(f"/jobs/{job.job_id}/", {"page": asked})
    assert response.status_code == 200
    page = response.content.decode()
    assert page.count('data-state="pending"') == 3
    # The poll keeps to the page shown, not the number typed.
    assert f'hx-get="/jobs/{job.job_id}/?polls=1"' in page


def test_a_missing_job_is_404(db, operator_browser):
    assert operator_browser.get("/jobs/job_nope/").status_code == 404


def test_contradictions_are_resolved_in_bulk(make_snapshot, operator_browser):
    for subject in ("account-1", "account-2"):
        make_snapshot(subject=subject, claimed="collect")
    page = operator_browser.get("/contradictions/").content.decode()
    assert page.count('class="bulk-pick"') == 2 and 'name="id"' in page
    preview = operator_browser.get(
        "/contradictions/bulk/", {"do": "resolve", "scope": "filter", "status": "open"}
    ).content.decode()
    assert '<span class="count" id="bulk-count">2</span>' in preview
    response = confirm(
        operator_browser,
        {"do": "resolve", "scope": "filter", "status": "open", "reason": "duplicate reports"},
        "/contradictions/bulk/",
    )
    job = BulkJob.objects.get()
    assert response["Location"] == f"/jobs/{job.job_id}/"
    bulk_job_run(job_id=job.job_id)
    assert set(Contradiction.objects.values_list("resolution_note", flat=True)) == {
        "duplicate reports"
    }


def test_the_effect_named_bulk_keeps_its_own_page(estate, agent, operator_browser):
    # The preview lives outside `effects/`, where every segment may be an idempotency key.
    commit_effect(agent, "bulk")
    html = operator_browser.get("/effects/bulk/").content.decode()
    assert "account-bulk" in html  # the effect's subject: its page, not a bulk preview
    assert 'name="confirm"' not in html


def test_all_matching_means_the_rows_the_list_showed(three, operator_browser):
    """The console's lists match text loosely ("U-1" finds account-u-1); "all N matching" on
    that list must be the same rows, not the API's exact reading of the same filter."""
    listed = operator_browser.get("/effects/", {"status": "unknown", "subject": "U-1"})
    assert re.search(r'<strong id="bulk-matching">1</strong>', listed.content.decode())

    loose = {**ALL_UNKNOWN, "subject": "U-1"}
    preview = operator_browser.get(PREVIEW, loose).content.decode()
    assert '<span class="count" id="bulk-count">1</span>' in preview
    confirm(operator_browser, {**loose, "reason": REASON})
    job = BulkJob.objects.get()
    assert [item.ref for item in job.items.all()] == ["u-1"]
    assert job.selection["read_by"] == "ConsoleEffectFilterSet"
    # The API reads the same filter exactly: no subject is "U-1".
    refused = operator_browser.post(
        "/api/v1/effects/bulk",
        {"filter": {"status": "unknown", "subject": "U-1"}, "action": "readback", "reason": "r"},
        content_type="application/json",
    )
    assert refused.json()["code"] == "nothing_matched"


def test_all_matching_keeps_every_filter_the_list_applies(three, operator_browser):
    """The list narrowed to one snapshot's effects: "all N matching" is that one row."""
    snapshot_id = Effect.objects.get(idempotency_key="u-1").snapshot.snapshot_id
    listed = operator_browser.get("/effects/", {"status": "unknown", "snapshot_id": snapshot_id})
    page = listed.content.decode()
    assert re.search(r'<strong id="bulk-matching">1</strong>', page)
    assert f'<input type="hidden" name="snapshot_id" value="{snapshot_id}">' in page

    scoped = {**ALL_UNKNOWN, "snapshot_id": snapshot_id}
    preview = operator_browser.get(PREVIEW, scoped).content.decode()
    assert '<span class="count" id="bulk-count">1</span>' in preview
    confirm(operator_browser, {**scoped, "reason": REASON})
    assert [item.ref for item in BulkJob.objects.get().items.all()] == ["u-1"]


@pytest.mark.parametrize(
    ("filterset", "carried"),
    [
        ("ConsoleEffectFilterSet", "EFFECT_FILTERS"),
        ("ConsoleContradictionFilterSet", "CONTRADICTION_FILTERS"),
    ],
)
def test_the_selection_carries_every_filter_of_its_list(filterset, carried):
    """Every filter a list applies is carried into "all N matching", except the list-only
    ones, with which the list offers no selection at all (the next test)."""
    from reconcile_app.console import filtersets
    from reconcile_app.console.views.effects import LIST_ONLY_FILTERS
    from reconcile_app.selectors import bulk

    applied = set(getattr(filtersets, filterset).base_filters) - set(LIST_ONLY_FILTERS)
    assert applied <= set(getattr(bulk, carried))


def test_a_list_narrowed_by_a_list_only_filter_offers_no_selection(three, operator_browser):
    settled = operator_browser.get(
        "/effects/", {"status": "all", "settled_after": "2000-01-01T00:00:00Z"}
    ).content.decode()
    assert "bulk-pick" not in settled and 'id="bulk-form"' not in settled
    assert "bulk-pick" in operator_browser.get("/effects/", {"status": "all"}).content.decode()


def test_a_confirmation_whose_rows_changed_since_the_preview_is_refused(
    estate, agent, operator_browser
):
    """Three rows previewed; one concluded and another joined meanwhile: the count is the
    same, the rows are not. The operator sees the new rows before anything runs."""
    unknowns(agent, 3)
    preview = operator_browser.get(PREVIEW, ALL_UNKNOWN).content.decode()
    Effect.objects.filter(idempotency_key="u-0").update(status="verified")
    unknowns(agent, 1, start=3)

    refused = operator_browser.post(
        PREVIEW, {**ALL_UNKNOWN, "reason": REASON, **fingerprint_of(preview)}
    )
    assert refused.status_code == 409
    page = refused.content.decode()
    assert 'data-code="selection_changed"' in page
    assert '<span class="count" id="bulk-count">3</span>' in page
    joined, left = (Effect.objects.get(idempotency_key=key).pk for key in ("u-3", "u-0"))
    assert f'id="effect-{joined}"' in page and f'id="effect-{left}"' not in page
    assert REASON in page
    assert not BulkJob.objects.exists()
    # The new preview's own fingerprint confirms the rows it shows.
    accepted = operator_browser.post(
        PREVIEW, {**ALL_UNKNOWN, "reason": REASON, **fingerprint_of(page)}
    )
    assert accepted.status_code == 302
    assert sorted(BulkJob.objects.get().items.values_list("ref", flat=True)) == [
        "u-1",
        "u-2",
        "u-3",
    ]


def test_a_confirmation_without_a_preview_is_refused(three, operator_browser):
    refused = operator_browser.post(PREVIEW, {**ALL_UNKNOWN, "reason": REASON})
    assert refused.status_code == 400
    assert 'data-code="preview_required"' in refused.content.decode()
    assert not BulkJob.objects.exists()


def test_a_refused_confirmation_leaves_the_post_url_so_a_reload_posts_nothing(
    estate, agent, operator_browser
):
    unknowns(agent, 11)
    preview_url = f"{PREVIEW}?do=readback&scope=filter&status=unknown"
    preview = operator_browser.get(preview_url).content.decode()
    # The preview's form posts to its own URL; a wrong typed count is refused.
    response = operator_browser.post(
        preview_url,
        {**ALL_UNKNOWN, "reason": REASON, "confirm": "3", **fingerprint_of(preview)},
        HTTP_REFERER=f"http://testserver{preview_url}",
    )
    assert response.status_code == 303 and response["Location"] == preview_url
    shown = operator_browser.get(preview_url)
    assert shown["X-Console-Refused-Form"] == "kept" and shown.status_code == 400
    assert 'data-code="confirmation_mismatch"' in shown.content.decode()
    assert REASON in shown.content.decode()
    # A reload reads the preview afresh: nothing posted, no job.
    again = operator_browser.get(preview_url)
    assert again.status_code == 200 and "X-Console-Refused-Form" not in again
    assert not BulkJob.objects.exists()


def test_the_job_page_leads_to_every_audit_row_of_the_job(three, operator_browser):
    confirm(operator_browser, {**ALL_UNKNOWN, "reason": REASON}, HTTP_X_REQUEST_ID="req-job-9")
    job = BulkJob.objects.get()
    bulk_job_run(job_id=job.job_id)
    page = operator_browser.get(f"/jobs/{job.job_id}/").content.decode()
    link = re.search(r'<a [^>]*id="job-audit" href="([^"]+)"', page).group(1)
    assert link == "/audit/?request_id=req-job-9"
    audit = operator_browser.get(link).content.decode()
    shown = set(re.findall(r'<tr id="audit-(\d+)"', audit))
    written = AuditEvent.objects.filter(request_id="req-job-9")
    assert written.count() == 4  # the job, and one readback per effect
    assert shown == {str(pk) for pk in written.values_list("pk", flat=True)}
    assert f'href="/jobs/{job.job_id}/"' in audit


def back_link(page: str, marker: str) -> dict[str, list[str]]:
    from urllib.parse import parse_qs, urlsplit

    found = re.search(rf'href="([^"]+)"[^>]*{marker}', page)
    assert found, marker
    url = urlsplit(found.group(1).replace("&amp;", "&"))
    return {"path": [url.path], **parse_qs(url.query)}


def test_back_to_the_list_keeps_its_tab_and_filters(three, operator_browser):
    """From the All tab (which sends no status) the preview leads back to All; a job started
    from a filtered list leads back to that list, filters kept."""
    shown = {"do": "readback", "scope": "filter", "action": "release_collections_hold"}
    preview = operator_browser.get(PREVIEW, shown).content.decode()
    assert back_link(preview, 'id="bulk-back"') == {
        "path": ["/effects/"],
        "action": ["release_collections_hold"],
        "status": ["all"],
    }
    started = confirm(operator_browser, {**ALL_UNKNOWN, **shown, "reason": REASON})
    job_page = operator_browser.get(started["Location"]).content.decode()
    assert back_link(job_page, ">Back to the list") == {
        "path": ["/effects/"],
        "status": ["unknown"],
        "action": ["release_collections_hold"],
    }


@pytest.mark.parametrize("asked", ["-1", "0", "abc"])
def test_a_mistyped_page_size_shows_a_real_page(three, operator_browser, asked):
    confirm(operator_browser, {**ALL_UNKNOWN, "reason": REASON})
    job = BulkJob.objects.get()
    response = operator_browser.get(f"/jobs/{job.job_id}/", {"per_page": asked})
    assert response.status_code == 200
    assert response.content.decode().count('data-state="pending"') == 3
