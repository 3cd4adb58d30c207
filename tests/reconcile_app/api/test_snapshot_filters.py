"""`GET /api/v1/snapshots?reason_code=&verdict=`: snapshots by a reason of their decision and by
a claim's verdict (the overview's bars open these lists in the console)."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from reconcile_app.models import DecisionReceipt
from tests.factories import claim, reconcile_body, seed_account_17


def ids(response) -> set[str]:
    assert response.status_code == 200, response.content
    return {row["snapshot_id"] for row in response.json()["results"]}


def test_reason_code_names_one_code_exactly(estate, agent, auditor):
    seed_account_17(timezone.now())
    denied = agent.post("/api/v1/reconcile", reconcile_body()).json()
    codes = [reason["code"] for reason in denied["decision"]["reasons"]]
    assert codes, "the seed's decision gives reasons"
    receipt = DecisionReceipt.objects.get(snapshot__snapshot_id=denied["snapshot_id"])
    assert [reason["code"] for reason in receipt.reasons] == codes
    assert ids(auditor.get("/api/v1/snapshots", reason_code=codes[0])) == {denied["snapshot_id"]}
    # Exact: a prefix of a code, or a code nobody gave, lists nothing.
    assert ids(auditor.get("/api/v1/snapshots", reason_code=codes[0][:-1])) == set()
    assert ids(auditor.get("/api/v1/snapshots", reason_code="no_such_code")) == set()


def test_verdict_lists_snapshots_with_a_claim_so_judged(estate, agent, auditor, now):
    seed_account_17(now)
    judged = agent.post(
        "/api/v1/reconcile",
        reconcile_body(
            claims=[claim("hold", written_at=now - timedelta(minutes=10), derived_from=["ev-002"])]
        ),
    ).json()
    verdict = judged["claims"][0]["verdict"]
    unjudged = agent.post("/api/v1/reconcile", reconcile_body()).json()
    listed = ids(auditor.get("/api/v1/snapshots", verdict=verdict))
    assert judged["snapshot_id"] in listed and unjudged["snapshot_id"] not in listed
    bad = auditor.get("/api/v1/snapshots", verdict="maybe")
    assert bad.status_code == 400
