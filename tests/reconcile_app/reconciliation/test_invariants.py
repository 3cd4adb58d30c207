"""The kernel's invariants, through the API: memory may advise, state must authorise.

1. A remembered claim never changes a policy result.
2. No ambient authority: without the capability nothing is reconciled.
3. Completeness is typed and follows the contract's required / optional split.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconcile_app.models import DecisionSnapshot
from sandbox_app.services import sandbox_fault_add
from tests.factories import (
    ACCOUNT,
    COLLECTIONS,
    EvidenceFactory,
    SandboxRecordFactory,
    reconcile_body,
    seed_account_17,
    seed_collectible,
)

RECONCILE = "/api/v1/reconcile"

# Text without NUL (which no JSON store keeps; see test_errors for that case on its own).
TEXT = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=12
)
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | TEXT
    | st.sampled_from(["hold", "collect", "open", "none", "manual_review", "bay-4", "bay-9"]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(TEXT, children, max_size=3),
    max_leaves=6,
)
MOMENTS = st.datetimes(
    min_value=datetime(2020, 1, 1), max_value=datetime(2030, 12, 31), timezones=st.just(UTC)
).map(lambda moment: moment.isoformat().replace("+00:00", "Z"))
CLAIMS = st.lists(
    st.fixed_dictionaries(
        {
            "subject": st.sampled_from([ACCOUNT, "account-99", "pallet-P17"]),
            "field": st.sampled_from(
                ["collections_status", "complaint_status", "pallet_bay", "postal_address"]
            ),
            "value": JSON_VALUES,
        },
        optional={
            "written_at": MOMENTS,
            "memory_class": st.sampled_from(["episodic", "case-notes", "procedural", ""]),
            "purpose": st.sampled_from(["collections", "fulfilment", "marketing", ""]),
            "derived_from": st.lists(st.sampled_from(["ev-001", "ev-002", "ev-x"]), max_size=3),
            "note": TEXT,
        },
    ),
    max_size=8,
)


def _deny(now: datetime) -> dict:
    seed_account_17(now)
    return reconcile_body()


def _allow(now: datetime) -> dict:
    seed_collectible(now)
    return reconcile_body()


def _escalate_on_contradiction(now: datetime) -> dict:
    seed_collectible(now)
    EvidenceFactory(value="hold", observed_at=now - timedelta(minutes=5), evidence_id="ev-later")
    return reconcile_body()


def _refuse_without_evidence(now: datetime) -> dict:
    SandboxRecordFactory(value="collect", version=3)
    SandboxRecordFactory(source="complaints-service", field="complaint_status", value="none")
    return reconcile_body()


def _warehouse_allow(now: datetime) -> dict:
    SandboxRecordFactory(
        source="warehouse-service",
        subject="pallet-P17",
        field="pallet_bay",
        value="bay-9",
        version=318,
        valid_from=now - timedelta(hours=1),
    )
    EvidenceFactory(
        subject="pallet-P17",
        field="pallet_bay",
        value="bay-9",
        source="warehouse-ledger",
        observed_at=now - timedelta(hours=1),
    )
    return reconcile_body(
        subject="pallet-P17",
        action="pick_pallet",
        purpose="fulfilment",
        decision_class="warehouse-pick",
    )


SCENARIOS = {
    "deny": (_deny, "deny"),
    "allow": (_allow, "allow"),
    "escalate": (_escalate_on_contradiction, "escalate"),
    "refuse": (_refuse_without_evidence, "refuse"),
    "warehouse": (_warehouse_allow, "allow"),
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_memory_claims_never_change_the_policy_result(estate, agent, now, scenario):
    build, expected_result = SCENARIOS[scenario]
    body = build(now)
    # Evidence about a field no contract reads: claims about it pull it into the manifest.
    EvidenceFactory(field="postal_address", value="1 Old Road", evidence_id="ev-address")
    EvidenceFactory(
        field="postal_address",
        value="9 New Road",
        evidence_id="ev-address-2",
        observed_at=now - timedelta(minutes=1),
    )
    baseline = agent.post(RECONCILE, body)
    assert baseline.status_code == 201, baseline.content
    expected = baseline.json()["decision"]
    assert expected["result"] == expected_result

    examples: list[int] = []

    @settings(
        suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=30, deadline=None
    )
    @given(claims=CLAIMS)
    def check(claims: list[dict]) -> None:
        examples.append(len(claims))
        response = agent.post(RECONCILE, {**body, "claims": claims})
        assert response.status_code == 201, response.content
        result = response.json()
        assert len(result["claims"]) == len(claims)
        assert result["decision"]["result"] == expected["result"]
        assert result["decision"]["permitted_actions"] == expected["permitted_actions"]
        assert result["decision"]["reasons"] == expected["reasons"]
        assert result["decision"] == expected

    check()
    assert len(examples) >= 20 and max(examples) >= 4


def test_a_contradicting_memory_is_stored_but_does_not_change_the_decision(estate, agent, now):
    seed_collectible(now)
    baseline = agent.post(RECONCILE, reconcile_body()).json()

    response = agent.post(
        RECONCILE,
        reconcile_body(
            claims=[
                {
                    "subject": ACCOUNT,
                    "field": "collections_status",
                    "value": "hold",
                    "written_at": now.isoformat(),
                    "memory_class": "episodic",
                }
            ]
        ),
    )

    body = response.json()
    assert body["claims"][0]["verdict"] == "contradicted"
    kinds = [item["kind"] for item in body["contradictions"]]
    assert kinds == ["memory_vs_state"]
    row = body["contradictions"][0]
    assert row["state"]["value"] == "collect"
    assert row["state"]["source"] == "case-service"
    assert row["other"]["value"] == "hold"
    assert row["other"]["source"] == "memory:episodic"
    assert body["decision"] == baseline["decision"]
    assert body["decision"]["result"] == "allow"


# --- No ambient authority ----------------------------------------------------------------------


@settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=25, deadline=None
)
@given(
    decision_class=st.sampled_from([COLLECTIONS, "warehouse-pick", "dispatch-card", "nope"]),
    action=st.sampled_from(["", "release_collections_hold", "pick_pallet", "dispatch_card", "*"]),
    purpose=st.sampled_from(["collections", "fulfilment", "card-dispatch"]),
)
def test_principal_without_capability_is_always_refused(
    estate, outsider, decision_class, action, purpose
):
    before = DecisionSnapshot.objects.count()
    response = outsider.post(
        RECONCILE,
        reconcile_body(
            decision_class=decision_class,
            action=action,
            purpose=purpose,
        ),
    )
    assert response.status_code == 403, response.content
    assert response.json()["code"] == "capability_missing"
    assert DecisionSnapshot.objects.count() == before


# --- Completeness is typed ---------------------------------------------------------------------

CASE_STATES = ["ok", "unavailable", "stale", "missing"]


def _arrange(source: str, field: str, value: str, state: str, now: datetime) -> None:
    if state != "missing":
        SandboxRecordFactory(
            source=source, field=field, value=value, valid_from=now - timedelta(hours=1)
        )
    if state == "unavailable":
        sandbox_fault_add(source=source, kind="unavailable")
    elif state == "stale":
        sandbox_fault_add(source=source, kind="lag", seconds=3600)


@pytest.mark.parametrize("required_state", CASE_STATES)
@pytest.mark.parametrize("optional_state", CASE_STATES)
def test_completeness_follows_required_and_optional_reads(
    estate, agent, now, required_state, optional_state
):
    _arrange("case-service", "collections_status", "collect", required_state, now)
    _arrange("complaints-service", "complaint_status", "none", optional_state, now)
    EvidenceFactory(value="collect", observed_at=now - timedelta(hours=1))

    body = agent.post(RECONCILE, reconcile_body()).json()

    expected_status = {
        "ok": "ok",
        "unavailable": "unavailable",
        "stale": "stale",
        "missing": "unavailable",
    }
    assert body["fields"]["collections_status"]["status"] == expected_status[required_state]
    assert body["fields"]["complaint_status"]["status"] == expected_status[optional_state]
    if required_state != "ok":
        assert body["completeness"] == "incomplete"
        assert body["decision"]["result"] == "refuse"
    elif optional_state != "ok":
        assert body["completeness"] == "degraded"
        assert body["decision"]["result"] == "allow"
    else:
        assert body["completeness"] == "complete"
        assert body["decision"]["result"] == "allow"
