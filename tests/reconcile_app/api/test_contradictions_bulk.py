"""`POST /api/v1/contradictions/bulk`: resolve many contradictions as one job."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_app.models import AuditEvent, BulkJob, Contradiction
from tests.reconcile_app.console.conftest import issue_snapshot

BULK = "/api/v1/contradictions/bulk"
NOTE = "duplicate reports from the contact centre"


@pytest.fixture
def contradictions(estate: Any, agent: Any) -> list[int]:
    for subject in ("account-1", "account-2", "account-3"):
        issue_snapshot(agent, subject=subject, claimed="collect")
    ids = list(Contradiction.objects.order_by("pk").values_list("pk", flat=True))
    assert len(ids) == 3
    return ids


def test_bulk_resolve_by_filter_runs_one_job_with_the_note(
    contradictions, operator, eager_tasks, django_capture_on_commit_callbacks
):
    subject = Contradiction.objects.get(pk=contradictions[0]).snapshot.subject
    with django_capture_on_commit_callbacks(execute=True):
        response = operator.post(
            BULK, {"filter": {"subject": subject}, "note": NOTE}, HTTP_X_REQUEST_ID="req-c-1"
        )
    assert response.status_code == 202, response.content
    body = response.json()
    assert (body["count"], body["kind"], body["action"]) == (1, "contradictions", "resolve")
    assert response["Location"] == f"/api/v1/jobs/{body['job_id']}"
    job = operator.get(f"/api/v1/jobs/{body['job_id']}").json()
    assert (job["status"], job["count"], job["done"], job["failed"]) == ("done", 1, 1, 0)
    resolved = Contradiction.objects.get(pk=contradictions[0])
    assert (resolved.status, resolved.resolution_note) == ("resolved", NOTE)
    assert Contradiction.objects.filter(status="open").count() == 2
    assert sorted(
        AuditEvent.objects.filter(request_id="req-c-1").values_list("action", flat=True)
    ) == ["bulk_job.create", "contradiction.resolve"]


def test_bulk_resolve_by_ids_skips_one_resolved_meanwhile(
    contradictions, operator, eager_tasks, django_capture_on_commit_callbacks
):
    first, *_ = contradictions
    operator.post(f"/api/v1/contradictions/{first}/resolve", {"note": "by hand"})
    with django_capture_on_commit_callbacks(execute=True):
        body = operator.post(BULK, {"ids": contradictions, "note": NOTE}).json()
    job = operator.get(f"/api/v1/jobs/{body['job_id']}").json()
    assert (job["count"], job["done"], job["skipped"], job["failed"]) == (3, 3, 1, 0)
    assert Contradiction.objects.get(pk=first).resolution_note == "by hand"
    assert set(Contradiction.objects.values_list("status", flat=True)) == {"resolved"}


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"note": NOTE}, "selection_required"),
        ({"ids": [1], "filter": {"subject": "account-1"}, "note": NOTE}, "selection_ambiguous"),
        ({"ids": [999999], "note": NOTE}, "unknown_keys"),
        ({"ids": [2**63, -(2**75)], "note": NOTE}, "unknown_keys"),
        ({"ids": [], "note": NOTE}, "nothing_matched"),
        ({"ids": "1", "note": NOTE}, "invalid_request"),
        ({"ids": ["one"], "note": NOTE}, "invalid_request"),
        ({"filter": {"colour": "red"}, "note": NOTE}, "invalid_filter"),
        ({"filter": {"subject": "nobody"}, "note": NOTE}, "nothing_matched"),
        ({"filter": {"subject": "account-1"}}, "reason_required"),
        ({"filter": {"subject": "account-1"}, "note": "   "}, "reason_required"),
        ({"filter": {"subject": "account-1"}, "note": "x" * 4001}, "reason_too_long"),
    ],
)
def test_a_bad_bulk_resolve_is_a_problem_with_its_code(contradictions, operator, body, code):
    response = operator.post(BULK, body)
    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == code
    assert not BulkJob.objects.exists()


def test_ids_past_the_key_columns_range_are_named_as_unknown(contradictions, operator):
    # Schemathesis found a 500 here on SQLite, which cannot bind an integer past 64 bits.
    response = operator.post(BULK, {"ids": [contradictions[0], 2**63, -(2**75)], "note": NOTE})
    assert (response.status_code, response.json()["code"]) == (400, "unknown_keys")
    assert response.json()["keys"] == [str(2**63), str(-(2**75))]


def test_only_operators_resolve_in_bulk(contradictions, auditor, reviewer, agent):
    body = {"ids": contradictions, "note": NOTE}
    assert auditor.post(BULK, body).status_code == 403
    assert reviewer.post(BULK, body).status_code == 403
    assert agent.post(BULK, body).json()["code"] == "people_only"
    assert not BulkJob.objects.exists()


def test_the_filter_takes_the_lists_status_and_refuses_what_the_service_refuses(
    contradictions, operator
):
    taken = operator.post(
        "/api/v1/contradictions/bulk",
        {"filter": {"status": "open", "subject": ["account-1"]}, "note": "dup"},
    )
    assert taken.status_code == 202, taken.content
    refused = operator.post(
        "/api/v1/contradictions/bulk",
        {"filter": {"kind": ["a", "b"]}, "note": "dup"},
    )
    assert (refused.status_code, refused.json()["code"]) == (400, "invalid_filter")


@pytest.mark.parametrize("selection", [{"subject": ""}, {}])
def test_an_empty_contradiction_filter_is_refused(operator, db, selection):
    response = operator.post(BULK, {"filter": selection, "note": NOTE})
    assert (response.status_code, response.json()["code"]) == (400, "invalid_filter")
