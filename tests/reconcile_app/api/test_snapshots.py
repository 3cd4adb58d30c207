"""Snapshots: content-addressed, immutable, listed with filters, visible to their principal."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.forms.models import model_to_dict
from django.test.utils import CaptureQueriesContext

from reconcile_app.canonical import content_hash
from reconcile_app.models import (
    ClaimVerdict,
    DecisionReceipt,
    DecisionSnapshot,
    StateRead,
)
from reconcile_app.services.contradictions import contradiction_resolve
from sandbox_app.services import sandbox_fault_add, sandbox_faults_clear
from tests.conftest import make_agent
from tests.factories import (
    ACCOUNT,
    COLLECTIONS,
    EvidenceFactory,
    SandboxRecordFactory,
    claim,
    load_yaml,
    reconcile_body,
    seed_account_17,
    seed_collectible,
)

RECONCILE = "/api/v1/reconcile"
SNAPSHOTS = "/api/v1/snapshots"

REDUCED_CONTRACT = """
decision_class: reduced-check
version: "1"
purpose: collections
required:
  - {field: collections_status, source: case-service, max_age_seconds: 300}
actions:
  release_collections_hold: {field: collections_status}
policy:
  version: "reduced-1"
  allow: [{when: 'true', permits: [release_collections_hold]}]
reducer: "hardship@3"
"""


def issue(persona, **kwargs) -> str:
    response = persona.post(RECONCILE, reconcile_body(**kwargs))
    assert response.status_code == 201, response.content
    return response.json()["snapshot_id"]


@pytest.fixture
def catalogue(estate, agent, tmp_path, now):
    """Five snapshots that differ on every filter of docs/api.md."""
    other = make_agent(
        "other-agent",
        [f"{COLLECTIONS}:release_collections_hold", "reduced-check:release_collections_hold"],
    )
    load_yaml(tmp_path, {"reduced.yaml": REDUCED_CONTRACT})
    seed_account_17(now)
    seed_collectible(now, subject="account-18")
    SandboxRecordFactory(
        source="warehouse-service",
        subject="pallet-P17",
        field="pallet_bay",
        value="bay-9",
        version=318,
    )
    EvidenceFactory(
        subject="pallet-P17",
        field="pallet_bay",
        value="bay-9",
        observed_at=now - timedelta(minutes=10),
    )

    ids = {"deny": issue(agent)}
    sandbox_fault_add(source="case-service", kind="unavailable")
    ids["refuse"] = issue(agent, subject="account-18")
    sandbox_faults_clear(source="case-service")
    ids["warehouse"] = issue(
        agent,
        subject="pallet-P17",
        action="pick_pallet",
        purpose="fulfilment",
        decision_class="warehouse-pick",
    )
    ids["other"] = issue(other, subject="account-18")
    ids["reduced"] = issue(other, decision_class="reduced-check")
    return ids


def listed(persona, **params) -> list[str]:
    response = persona.get(SNAPSHOTS, **params)
    assert response.status_code == 200, response.content
    return sorted(item["snapshot_id"] for item in response.json()["results"])


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({}, ["deny", "refuse", "warehouse", "other", "reduced"]),
        ({"decision_class": "warehouse-pick"}, ["warehouse"]),
        ({"decision_class": COLLECTIONS}, ["deny", "refuse", "other"]),
        ({"subject": "account-18"}, ["refuse", "other"]),
        ({"result": "refuse"}, ["refuse"]),
        ({"result": "deny"}, ["deny"]),
        ({"result": "allow"}, ["warehouse", "other", "reduced"]),
        ({"completeness": "incomplete"}, ["refuse"]),
        ({"completeness": "complete"}, ["deny", "warehouse", "other", "reduced"]),
        ({"reducer_version": "hardship@3"}, ["reduced"]),
        ({"source": "warehouse-service"}, ["warehouse"]),
        ({"source": "complaints-service"}, ["deny", "refuse", "other"]),
        ({"source": "case-service", "result": "allow"}, ["other", "reduced"]),
    ],
)
def test_people_filter_snapshots_by_every_documented_filter(catalogue, auditor, params, expected):
    assert listed(auditor, **params) == sorted(catalogue[name] for name in expected)


def test_agents_only_see_their_own_snapshots(catalogue, agent):
    assert listed(agent) == sorted(catalogue[n] for n in ("deny", "refuse", "warehouse"))
    response = agent.get(f"{SNAPSHOTS}/{catalogue['other']}")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "snapshot_not_found"


def test_outsider_sees_no_snapshots(catalogue, outsider):
    assert listed(outsider) == []


def test_invalid_filter_value_is_a_problem_not_a_crash(catalogue, auditor):
    response = auditor.get(SNAPSHOTS, result="perhaps")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"


def test_detail_has_the_same_shape_as_the_reconcile_answer(estate, agent, now):
    seed_account_17(now)
    posted = agent.post(
        RECONCILE,
        reconcile_body(
            claims=[
                claim("collect", written_at=now - timedelta(hours=3)),
            ]
        ),
    ).json()

    fetched = agent.get(f"{SNAPSHOTS}/{posted['snapshot_id']}")

    assert fetched.status_code == 200
    assert fetched.json() == posted
    [listed_item] = agent.get(SNAPSHOTS).json()["results"]
    assert listed_item == posted


def test_snapshot_id_is_the_hash_of_its_canonical_content(estate, agent, now):
    seed_account_17(now)
    snapshot_id = issue(agent, claims=[claim("hold", written_at=now)])

    snapshot = DecisionSnapshot.objects.get(snapshot_id=snapshot_id)
    digest = content_hash(snapshot.content)
    assert snapshot.content_hash == digest
    assert snapshot_id == "snap_" + digest[:32]
    binding = snapshot.content["binding"]
    assert {key: binding[key] for key in binding if key != "capabilities"} == {
        "principal": "collections-agent",
        "subject": ACCOUNT,
        "purpose": "collections",
        "decision_class": COLLECTIONS,
        "proposed_action": "release_collections_hold",
    }
    assert snapshot.content["contract"]["version"] == "7.3"
    # The manifest holds what the decision rests on: ev-002 supports the state "hold";
    # ev-001 ("collect", older) neither supports nor contradicts it.
    assert [item["evidence_id"] for item in snapshot.content["evidence_manifest"]] == [
        "ev-002",
    ]


@pytest.mark.parametrize("value", [1e20, 12345678901234567890.0, 0.1, 2.0, -0.0, 10**30])
def test_snapshot_id_recomputes_from_stored_content_whatever_the_claimed_number(
    estate, agent, now, value
):
    """A stored snapshot must hash to its id on every database (replay depends on it)."""
    seed_account_17(now)
    snapshot_id = issue(agent, claims=[claim(value, written_at=now)])

    snapshot = DecisionSnapshot.objects.get(snapshot_id=snapshot_id)
    assert "snap_" + content_hash(snapshot.content)[:32] == snapshot_id


def test_distinct_requests_issue_distinct_snapshots(estate, agent, now):
    seed_account_17(now)
    first, second = issue(agent), issue(agent)
    assert first != second
    assert DecisionSnapshot.objects.count() == 2
    assert DecisionReceipt.objects.count() == 2


def test_snapshot_rows_are_not_modified_by_later_requests(estate, agent, operator, now):
    seed_collectible(now)
    EvidenceFactory(value="hold", observed_at=now - timedelta(minutes=5), evidence_id="ev-late")
    posted = agent.post(
        RECONCILE,
        reconcile_body(
            claims=[
                claim("hold", written_at=now - timedelta(minutes=1)),
            ]
        ),
    ).json()
    snapshot = DecisionSnapshot.objects.get(snapshot_id=posted["snapshot_id"])

    def frozen() -> dict:
        return {
            "snapshot": model_to_dict(DecisionSnapshot.objects.get(pk=snapshot.pk)),
            "reads": [model_to_dict(r) for r in StateRead.objects.filter(snapshot=snapshot)],
            "claims": [model_to_dict(c) for c in ClaimVerdict.objects.filter(snapshot=snapshot)],
            "receipt": model_to_dict(DecisionReceipt.objects.get(snapshot=snapshot)),
        }

    before = frozen()
    assert before["receipt"]["result"] == "escalate"
    assert len(before["reads"]) == 2 and len(before["claims"]) == 1

    # Everything that could tempt a later request to "fix" an old snapshot:
    agent.post(
        "/api/v1/evidence",
        {
            "kind": "correction",
            "subject": ACCOUNT,
            "source": "case-ledger",
            "observed_at": now.isoformat(),
            "revokes": "ev-late",
        },
    )
    operator.client.put(
        "/api/v1/sandbox/case-service/records/account-17/collections_status",
        {"value": "hold"},
        format="json",
    )
    for row in snapshot.contradictions.all():
        contradiction_resolve(contradiction_id=row.pk, actor=operator.user, note="checked")
    later = agent.post(RECONCILE, reconcile_body()).json()
    assert later["decision"]["result"] != "escalate"

    assert frozen() == before
    fetched = agent.get(f"{SNAPSHOTS}/{posted['snapshot_id']}").json()
    for key in ("decision", "fields", "claims", "completeness", "cutoffs", "evidence_manifest"):
        assert fetched[key] == posted[key]


def test_snapshot_list_query_count_does_not_grow_with_rows(estate, agent, auditor, now):
    seed_collectible(now)
    EvidenceFactory(value="hold", observed_at=now - timedelta(minutes=5))

    def count_queries(persona) -> int:
        persona.client.get(SNAPSHOTS)
        with CaptureQueriesContext(connection) as queries:
            response = persona.client.get(SNAPSHOTS)
        assert response.status_code == 200
        return len(queries)

    issue(agent)
    few = {name: count_queries(p) for name, p in (("agent", agent), ("auditor", auditor))}
    for _ in range(5):
        issue(agent, claims=[claim("hold", written_at=now)])
    assert {name: count_queries(p) for name, p in (("agent", agent), ("auditor", auditor))} == few
