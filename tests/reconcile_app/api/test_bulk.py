"""`POST /api/v1/effects/bulk` and `GET /api/v1/jobs/{job_id}`."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_app.models import AuditEvent, BulkJob, BulkJobItem, Effect
from reconcile_app.services.bulk_jobs import bulk_job_run
from tests.reconcile_app.console.conftest import commit_effect

BULK = "/api/v1/effects/bulk"
REASON = "owner outage 09:00-09:20"
# The caller's token and roles, then the job; one more for its failures when some failed.
JOB_QUERIES = 3


@pytest.fixture
def unknowns(estate: Any, agent: Any) -> list[str]:
    return [
        commit_effect(agent, f"u-{n}", fault="timeout_after_commit").idempotency_key
        for n in range(3)
    ]


def test_bulk_recheck_runs_one_job_whose_audit_shares_the_request_id(
    unknowns, operator, eager_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = operator.post(
            BULK,
            {"filter": {"status": "unknown"}, "action": "readback", "reason": REASON},
            HTTP_X_REQUEST_ID="req-outage-42",
        )
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["count"] == 3 and body["job_id"].startswith("job_")
    assert response["Location"] == f"/api/v1/jobs/{body['job_id']}"

    job = operator.get(f"/api/v1/jobs/{body['job_id']}").json()
    assert {key: job[key] for key in ("status", "count", "done", "failed", "skipped")} == {
        "status": "done",
        "count": 3,
        "done": 3,
        "failed": 0,
        "skipped": 0,
    }
    assert (job["created_by"], job["reason"], job["request_id"]) == (
        operator.name,
        REASON,
        "req-outage-42",
    )
    assert set(Effect.objects.values_list("status", flat=True)) == {"verified"}
    rows = AuditEvent.objects.filter(request_id="req-outage-42")
    assert (
        sorted(rows.values_list("action", flat=True))
        == ["bulk_job.create"] + ["effect.readback"] * 3
    )


def test_bulk_resolve_by_keys(unknowns, operator, eager_tasks, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = operator.post(
            BULK,
            {
                "keys": unknowns[:2],
                "action": "resolve",
                "outcome": "not_executed",
                "reason": REASON,
            },
        )
    assert response.status_code == 202, response.content
    assert response.json()["count"] == 2
    statuses = dict(Effect.objects.values_list("idempotency_key", "status"))
    assert statuses == {"u-0": "not_executed", "u-1": "not_executed", "u-2": "unknown"}


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"action": "readback", "reason": REASON}, "selection_required"),
        (
            {
                "keys": ["u-0"],
                "filter": {"status": "unknown"},
                "action": "readback",
                "reason": REASON,
            },
            "selection_ambiguous",
        ),
        ({"keys": ["u-0", "nope"], "action": "readback", "reason": REASON}, "unknown_keys"),
        (
            {"filter": {"status": "verified"}, "action": "readback", "reason": REASON},
            "nothing_matched",
        ),
        ({"filter": {"colour": "red"}, "action": "readback", "reason": REASON}, "invalid_filter"),
        ({"keys": ["u-0"], "action": "resolve", "reason": REASON}, "outcome_required"),
        ({"keys": ["u-0"], "action": "readback"}, "reason_required"),
        ({"keys": ["u-0"], "action": "readback", "reason": "   "}, "reason_required"),
        ({"keys": ["u-0"], "action": "undo", "reason": REASON}, "invalid_action"),
        ({"keys": "u-0", "action": "readback", "reason": REASON}, "invalid_request"),
    ],
)
def test_a_bad_bulk_request_is_a_problem_with_its_code(unknowns, operator, body, code):
    response = operator.post(BULK, body)
    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == code
    assert not BulkJob.objects.exists()


def test_unknown_keys_are_named(unknowns, operator):
    response = operator.post(
        BULK, {"keys": ["u-0", "ghost-1", "ghost-2"], "action": "readback", "reason": REASON}
    )
    assert response.json()["keys"] == ["ghost-1", "ghost-2"]


def test_only_operators_start_jobs_and_people_read_them(unknowns, operator, auditor, agent):
    body = {"keys": ["u-0"], "action": "readback", "reason": REASON}
    assert auditor.post(BULK, body).status_code == 403
    assert agent.post(BULK, body).json()["code"] == "people_only"
    job_id = operator.post(BULK, body).json()["job_id"]
    assert auditor.get(f"/api/v1/jobs/{job_id}").json()["status"] == "running"
    assert agent.get(f"/api/v1/jobs/{job_id}").json()["code"] == "people_only"
    missing = operator.get("/api/v1/jobs/job_nope")
    assert (missing.status_code, missing.json()["code"]) == (404, "job_not_found")


def test_a_recheck_the_owner_cannot_settle_is_still_unknown_not_failed(
    unknowns, operator, eager_tasks, django_capture_on_commit_callbacks, django_assert_num_queries
):
    from sandbox_app.services import sandbox_fault_add

    sandbox_fault_add(source="case-service", kind="unavailable")
    with django_capture_on_commit_callbacks(execute=True):
        job_id = operator.post(
            BULK, {"filter": {"status": "unknown"}, "action": "readback", "reason": REASON}
        ).json()["job_id"]
    with django_assert_num_queries(JOB_QUERIES):
        job = operator.get(f"/api/v1/jobs/{job_id}").json()
    assert (job["status"], job["done"], job["failed"]) == ("done", 3, 0)
    assert (job["still_unknown"], job["failures"]) == (3, [])
    assert set(Effect.objects.values_list("status", flat=True)) == {"unknown"}


def test_a_job_reports_its_failures(unknowns, operator, auditor, django_assert_num_queries):
    job_id = operator.post(
        BULK, {"filter": {"status": "unknown"}, "action": "readback", "reason": REASON}
    ).json()["job_id"]
    operator.user.is_active = False
    operator.user.save(update_fields=["is_active"])
    bulk_job_run(job_id=job_id)
    with django_assert_num_queries(JOB_QUERIES + 1):
        job = auditor.get(f"/api/v1/jobs/{job_id}").json()
    assert (job["status"], job["done"], job["failed"], job["still_unknown"]) == ("done", 0, 3, 0)
    assert [failure["ref"] for failure in job["failures"]] == unknowns
    assert all("no longer an active operator" in failure["detail"] for failure in job["failures"])


@pytest.mark.parametrize(
    ("filters", "count"),
    [
        ({"status": ["unknown", "accepted"]}, 3),  # as the list's ?status=…&status=…
        ({"status": ["unknown"], "subject": ["account-u-1"]}, 1),  # as the console sends it
        ({"status": "unknown", "subject": "account-u-2"}, 1),
    ],
)
def test_the_filter_takes_what_the_service_takes(unknowns, operator, filters, count):
    response = operator.post(BULK, {"filter": filters, "action": "readback", "reason": REASON})
    assert response.status_code == 202, response.content
    assert response.json()["count"] == count


def test_the_snapshot_filter_is_taken_as_the_list_takes_it(unknowns, operator):
    snapshot_id = Effect.objects.get(idempotency_key="u-1").snapshot.snapshot_id
    response = operator.post(
        BULK, {"filter": {"snapshot_id": snapshot_id}, "action": "readback", "reason": REASON}
    )
    assert response.status_code == 202, response.content
    assert BulkJob.objects.get().items.get().ref == "u-1"


@pytest.mark.parametrize(
    "filters",
    [
        {"subject": ["account-u-1", "account-u-2"]},  # one value only: never silently the last
        {"status": [1]},
        {"status": {"in": "unknown"}},
        {"nonsense": "x"},
    ],
)
def test_a_filter_value_the_service_refuses_the_api_refuses_alike(unknowns, operator, filters):
    from reconcile_app.errors import ValidationFailed
    from reconcile_app.selectors.bulk import effect_selection

    response = operator.post(BULK, {"filter": filters, "action": "readback", "reason": REASON})
    assert (response.status_code, response.json()["code"]) == (400, "invalid_filter")
    with pytest.raises(ValidationFailed) as refused:
        effect_selection(action="readback", filters=filters)
    assert refused.value.code == "invalid_filter"
    assert not BulkJob.objects.exists()


@pytest.mark.parametrize(
    "selection",
    [
        {"source": ""},
        {"source": "  "},
        {"subject": ["", ""]},
        {"status": []},
        {},
    ],
)
def test_an_empty_filter_value_is_refused_rather_than_read_as_every_row(
    unknowns, operator, selection
):
    """A script whose `$SOURCE` is unset must not resolve every source's effects."""
    response = operator.post(
        BULK,
        {"filter": selection, "action": "resolve", "outcome": "not_executed", "reason": REASON},
    )
    assert (response.status_code, response.json()["code"]) == (400, "invalid_filter")
    assert not BulkJob.objects.exists()
    assert set(Effect.objects.values_list("status", flat=True)) == {"unknown"}


def test_an_operator_cancels_a_running_job_and_it_acts_on_nothing_more(
    unknowns, operator, reviewer, agent
):
    started = operator.post(
        BULK,
        {
            "filter": {"status": "unknown"},
            "action": "resolve",
            "outcome": "not_executed",
            "reason": REASON,
        },
        HTTP_X_REQUEST_ID="req-wrong-outcome",
    )
    job_id = started.json()["job_id"]  # no worker in tests: the job has not run yet
    url = f"/api/v1/jobs/{job_id}/cancel"
    assert (reviewer.post(url, {"reason": "x"}).json()["code"]) == "forbidden"
    assert (agent.post(url, {"reason": "x"}).json()["code"]) == "people_only"
    for blank in ({}, {"reason": " "}):
        assert operator.post(url, blank).json()["code"] == "reason_required"

    response = operator.post(
        url, {"reason": "wrong outcome chosen"}, HTTP_X_REQUEST_ID="req-stop-1"
    )

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["status"], body["cancelled_by"], body["cancel_reason"]) == (
        "cancelled",
        operator.name,
        "wrong outcome chosen",
    )
    assert (body["count"], body["done"], body["skipped"], body["failed"]) == (3, 3, 3, 0)
    bulk_job_run(job_id=job_id)  # the queued task, delivered after all: nothing happens
    assert set(Effect.objects.values_list("status", flat=True)) == {"unknown"}
    cancelled = AuditEvent.objects.get(action="bulk_job.cancel")
    assert (cancelled.object_ref, cancelled.reason, cancelled.request_id) == (
        job_id,
        "wrong outcome chosen",
        "req-stop-1",
    )
    again = operator.post(url, {"reason": "again"})
    assert (again.status_code, again.json()["code"]) == (409, "job_not_running")
    missing = operator.post("/api/v1/jobs/job_missing/cancel", {"reason": "x"})
    assert (missing.status_code, missing.json()["code"]) == (404, "job_not_found")


def test_a_job_cancelled_while_it_runs_stops_between_rows(unknowns, operator, monkeypatch):
    from reconcile_app.services import bulk_jobs

    job = bulk_jobs.bulk_job_create(
        actor=operator.user,
        action="resolve",
        outcome="not_executed",
        reason=REASON,
        filters={"status": "unknown"},
    )
    real = bulk_jobs.starter_still_operates
    rows_begun = []

    def cancelled_as_the_second_row_begins(job):
        rows_begun.append(1)
        if len(rows_begun) == 2:  # another operator's cancel commits now
            bulk_jobs.bulk_job_cancel(job_id=job.job_id, actor=operator.user, reason="stop")
        return real(job)

    monkeypatch.setattr(bulk_jobs, "starter_still_operates", cancelled_as_the_second_row_begins)
    job = bulk_job_run(job_id=job.job_id)

    # The first row was resolved before the cancel; the row in hand as it came is undone
    # with its item (whose move out of `pending` fails); the third is never begun.
    assert job.status == "cancelled" and len(rows_begun) == 2
    statuses = list(Effect.objects.order_by("created_at", "id").values_list("status", flat=True))
    assert statuses == ["not_executed", "unknown", "unknown"]
    assert AuditEvent.objects.filter(action="effect.resolve").count() == 1
    assert (job.done, job.skipped, job.failed) == (3, 2, 0)


def test_a_job_that_has_acted_on_every_row_is_not_cancelled(unknowns, operator):
    job = bulk_jobs_module().bulk_job_create(
        actor=operator.user, action="readback", reason=REASON, filters={"status": "unknown"}
    )
    BulkJobItem.objects.filter(job=job).update(state="done")  # the run's last word pending
    response = operator.post(f"/api/v1/jobs/{job.job_id}/cancel", {"reason": "too late"})
    assert (response.status_code, response.json()["code"]) == (409, "job_not_running")
    assert BulkJob.objects.get(pk=job.pk).status == "running"


def test_a_recheck_in_hand_as_the_job_is_cancelled_is_audited_and_said(
    unknowns, operator, monkeypatch
):
    """The owner was asked in the operator's name: the audit has it and the row says it,
    though the cancel had already counted the row as not reached."""
    from reconcile_app.services import bulk_items

    jobs = bulk_jobs_module()
    job = jobs.bulk_job_create(
        actor=operator.user, action="readback", reason=REASON, keys=[unknowns[0]]
    )
    real = bulk_items.effect_resolve_unknown

    def cancelled_while_asking(**kwargs):
        jobs.bulk_job_cancel(job_id=job.job_id, actor=operator.user, reason="stop")
        return real(**kwargs)

    monkeypatch.setattr(bulk_items, "effect_resolve_unknown", cancelled_while_asking)
    bulk_job_run(job_id=job.job_id)

    item = BulkJobItem.objects.get(job=job)
    assert item.state == "skipped"
    assert item.detail.startswith("re-checked as the job was cancelled: unknown → verified")
    audited = AuditEvent.objects.get(action="effect.readback")
    assert (audited.object_ref, audited.after["status"]) == (
        unknowns[0],
        "verified",
    )


def bulk_jobs_module():
    from reconcile_app.services import bulk_jobs

    return bulk_jobs
