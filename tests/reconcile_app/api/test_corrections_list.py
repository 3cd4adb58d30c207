"""GET /api/v1/corrections: an auditor lists the corrections made, and narrows them."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from reconcile_app.api.serializers import CorrectionListItemOutput
from reconcile_app.canonical import rfc3339
from reconcile_app.models import Correction
from reconcile_app.services.corrections import correction_create
from tests.factories import EvidenceFactory


def corrected(operator: Any, *, subject: str, field: str, value: Any = None) -> Correction:
    """An observation recorded, then corrected by `operator` (with `value` as replacement)."""
    evidence_id = f"ev-{subject}-{field}"
    EvidenceFactory(evidence_id=evidence_id, subject=subject, field=field)
    return correction_create(
        evidence_id=evidence_id,
        reason=f"{subject} was keyed wrong",
        actor=operator.user,
        replacement=None if value is None else {"value": value},
    )


def test_an_auditor_lists_every_correction_newest_first(operator, auditor):
    first = corrected(operator, subject="account-17", field="collections_status")
    second = corrected(operator, subject="account-18", field="balance", value=40)

    response = auditor.get("/api/v1/corrections")

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["count"] == 2
    newest, oldest = body["results"]
    assert [newest["correction_id"], oldest["correction_id"]] == [
        second.correction_id,
        first.correction_id,
    ]
    assert newest["evidence_id"] == second.corrected.evidence_id
    assert (newest["subject"], newest["field"], newest["source"]) == (
        "account-18",
        "balance",
        "case-ledger",
    )
    assert newest["actor"] == operator.user.username
    assert newest["reason"] == "account-18 was keyed wrong"
    assert newest["status"] == "complete"
    assert newest["counts"] == second.counts
    # The correction's own entry: a replacement supersedes, a revocation revokes.
    assert newest["correction"]["supersedes"] == second.corrected.evidence_id
    assert newest["correction"]["value"] == 40
    assert oldest["correction"]["revokes"] == first.corrected.evidence_id
    # Every item carries exactly the fields the schema documents.
    assert set(newest) == set(CorrectionListItemOutput().fields)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"subject": "account-18"}, ["b"]),
        ({"field": "collections_status"}, ["a", "c"]),
        ({"source": "case-ledger"}, ["a", "b", "c"]),
        ({"source": "elsewhere"}, []),
        ({"status": "complete"}, ["a", "b", "c"]),
        ({"status": "computing"}, []),
    ],
)
def test_corrections_narrow_by_what_they_corrected(operator, auditor, query, expected):
    made = {
        "a": corrected(operator, subject="account-17", field="collections_status"),
        "b": corrected(operator, subject="account-18", field="balance"),
        "c": corrected(operator, subject="account-19", field="collections_status"),
    }
    first_evidence = made["a"].corrected.evidence_id

    listed = auditor.get("/api/v1/corrections", **query).json()["results"]
    by_entry = auditor.get("/api/v1/corrections", evidence_id=first_evidence).json()["results"]

    names = {made[name].correction_id: name for name in made}
    assert sorted(names[item["correction_id"]] for item in listed) == expected
    assert [item["correction_id"] for item in by_entry] == [made["a"].correction_id]


def test_corrections_narrow_by_who_and_when(operator, auditor, django_user_model):
    early = corrected(operator, subject="account-17", field="collections_status")
    Correction.objects.filter(pk=early.pk).update(created_at=timezone.now() - timedelta(days=3))
    late = corrected(operator, subject="account-18", field="balance")
    cut = rfc3339(timezone.now() - timedelta(days=1))

    since = auditor.get("/api/v1/corrections", since=cut).json()["results"]
    until = auditor.get("/api/v1/corrections", until=cut).json()["results"]
    mine = auditor.get("/api/v1/corrections", actor=operator.user.username).json()
    nobody = auditor.get("/api/v1/corrections", actor="someone-else").json()

    assert [item["correction_id"] for item in since] == [late.correction_id]
    assert [item["correction_id"] for item in until] == [early.correction_id]
    assert mine["count"] == 2
    assert nobody["count"] == 0


@pytest.mark.parametrize(
    "query",
    [{"status": "finished"}, {"since": "yesterday"}, {"until": "2026-13-01T00:00:00Z"}],
)
def test_a_filter_it_cannot_read_is_a_problem_not_an_empty_list(auditor, query):
    response = auditor.get("/api/v1/corrections", **query)

    assert response.status_code == 400, response.content
    assert response["Content-Type"].startswith("application/problem+json")


@pytest.mark.parametrize("rows", [1, 12])
def test_listing_costs_the_same_however_many_corrections_are_shown(
    operator, auditor, django_assert_num_queries, rows
):
    for n in range(rows):
        corrected(operator, subject=f"account-{n}", field="balance", value=n or None)

    # Authentication (the key and its principal), the count and the page.
    with django_assert_num_queries(4):
        response = auditor.get("/api/v1/corrections")

    assert response.json()["count"] == rows
