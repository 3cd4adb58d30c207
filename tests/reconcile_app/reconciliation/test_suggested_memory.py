"""A suggested memory never changes a decision (seed 000: "a policy-like memory needs an
approved owner or remains a suggestion"): it is never in force, so the owner's rule for facts
answers as if it were not there, and a reconcile whose claims recall it decides as one
without them."""

from __future__ import annotations

from datetime import UTC, date, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconcile_app.choices import MemoryStatus, ReadStatus
from reconcile_app.models import MemoryRecord
from reconcile_app.services.facts import select_current
from reconcile_app.sources import AuthorityResult
from sandbox_app.services import sandbox_authority_write
from tests.factories import (
    ACCOUNT,
    EvidenceFactory,
    load_yaml,
    reconcile_body,
    seed_account_17,
    seed_collectible,
)

MEMORIES = "/api/v1/memories"
RECONCILE = "/api/v1/reconcile"
TODAY = date(2026, 9, 30)

# --- The rule for facts, as a pure function -----------------------------------------------------

OWNERS = st.sampled_from(["eval-team", "platform", "", None])
REVISIONS = st.sampled_from(["r17", "r18", "r19"])
VALID_UNTIL = st.one_of(st.none(), st.dates(date(2026, 9, 1), date(2026, 10, 31)))
RECORDS = st.lists(
    st.tuples(
        st.sampled_from([status for status in MemoryStatus if status != MemoryStatus.SUGGESTED]),
        OWNERS,
        REVISIONS,
        VALID_UNTIL,
    ),
    max_size=5,
)
SUGGESTIONS = st.lists(st.tuples(OWNERS, REVISIONS, VALID_UNTIL), min_size=1, max_size=4)
AUTHORITIES = st.one_of(
    st.none(),
    st.builds(
        AuthorityResult,
        status=st.sampled_from([ReadStatus.OK, ReadStatus.OK, ReadStatus.UNAVAILABLE]),
        owner=st.sampled_from(["eval-team", "platform", ""]),
        source_revision=st.sampled_from(["r17", "r18", ""]),
    ),
)


def record(memory_id: str, status: str, owner, revision: str, valid_until) -> MemoryRecord:
    return MemoryRecord(
        memory_id=memory_id,
        status=status,
        owner=owner,
        source_revision=revision,
        valid_until=valid_until,
        fact_key="baseline.math-eval",
    )


@settings(max_examples=300, deadline=None)
@given(records=RECORDS, suggestions=SUGGESTIONS, authority=AUTHORITIES, insert_at=st.integers(0, 5))
def test_select_current_answers_the_same_with_suggested_records_added(
    records, suggestions, authority, insert_at
):
    known = [record(f"rec-{i}", *values) for i, values in enumerate(records)]
    suggested = [
        record(f"sug-{i}", MemoryStatus.SUGGESTED, *values) for i, values in enumerate(suggestions)
    ]
    mixed = known[:insert_at] + suggested + known[insert_at:]

    without = select_current(known, TODAY, authority)
    with_them = select_current(mixed, TODAY, authority)

    assert with_them.code == without.code
    assert with_them.fact is without.fact
    # A suggestion is never a candidate for selection; lists of every record just name it.
    suggested_ids = {item.memory_id for item in suggested}
    assert [ref for ref in with_them.candidates if ref not in suggested_ids] == without.candidates


# --- Facts through the API: a reviewed fact class ---------------------------------------------

REVIEWED_FACTS = """\
memory_class: proposed-facts
kind: fact
owner: eval-team
admission: review
"""


def test_suggested_fact_records_change_no_answer_until_promoted(estate, agent, reviewer, tmp_path):
    load_yaml(tmp_path, {"proposed-facts.yaml": REVIEWED_FACTS})
    sandbox_authority_write(
        source="eval-registry",
        fact_key="baseline.math-eval",
        owner="eval-team",
        source_revision="r18",
    )
    EvidenceFactory(evidence_id="ev-r18", subject="math-eval", field="baseline")

    def fact(memory_id: str, memory_class: str) -> dict:
        response = agent.post(
            MEMORIES,
            {
                "memory_id": memory_id,
                "memory_class": memory_class,
                "subject": "math-eval",
                "purpose": "nightly-eval-summary",
                "fact_key": "baseline.math-eval",
                "value": f"ckpt-{memory_id}",
                "owner": "eval-team",
                "source_revision": "r18",
                "derived_from": ["ev-r18"],
            },
        )
        assert response.status_code == 201, response.content
        return response.json()

    def answer() -> tuple[int, dict]:
        response = agent.get("/api/v1/facts/baseline.math-eval/current", on="2026-09-30")
        return response.status_code, response.json()

    assert answer()[0] == 404  # nothing yet: no_current_record
    suggestion = fact("proposed", "proposed-facts")
    assert suggestion["status"] == "suggested"
    assert answer()[1]["code"] == "no_current_record"  # the suggestion is never selected

    fact("registered", "operational")
    status, body = answer()
    assert (status, body["fact"]["memory_id"]) == (200, "registered")
    fact("proposed-2", "proposed-facts")
    assert answer() == (status, body)  # a second eligible suggestion: still not ambiguous

    # Promoted, it is in force: now two eligible records are ambiguous, as the rule says.
    reviewer.post(
        f"/api/v1/escalations/{suggestion['promotion_escalation_id']}/approve",
        {"rationale": "the registry lists it"},
    )
    status, body = answer()
    assert (status, body["code"]) == (409, "authority_ambiguous")
    assert sorted(body["candidates"]) == ["proposed", "registered"]


# --- Reconcile: claims recalled from suggestions ------------------------------------------------

VALUES = st.one_of(
    st.sampled_from(["hold", "collect", "released", "manual_review", "open", "none"]),
    st.integers(-5, 5),
    st.none(),
    st.lists(st.sampled_from(["hold", "collect"]), max_size=2),
)
RECALLED = st.lists(
    st.fixed_dictionaries(
        {
            "memory_class": st.sampled_from(["runbooks", "house-rules"]),
            "field": st.sampled_from(["collections_status", "complaint_status", "postal_address"]),
            "value": VALUES,
            "minutes_ago": st.integers(0, 600),
        }
    ),
    min_size=1,
    max_size=3,
)
SCENARIOS = {"allow": seed_collectible, "deny": seed_account_17}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_a_reconcile_recalling_suggestions_decides_as_one_without_them(
    estate, agent, now, scenario
):
    SCENARIOS[scenario](now)
    body = reconcile_body()
    baseline = agent.post(RECONCILE, body)
    assert baseline.status_code == 201, baseline.content
    expected = baseline.json()["decision"]
    assert expected["result"] == scenario
    # What the suggestions derive from: a note about the procedure, not about the account's
    # state (an observation of the account would itself be support or a contradiction).
    evidence_id = EvidenceFactory(
        evidence_id="ev-basis", subject="collections-playbook", field="step", value="re-read"
    ).evidence_id
    examples: list[int] = []

    @settings(
        suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=15, deadline=None
    )
    @given(recalled=RECALLED)
    def check(recalled: list[dict]) -> None:
        claims = []
        for item in recalled:
            written = agent.post(
                MEMORIES,
                {
                    "memory_class": item["memory_class"],
                    "subject": ACCOUNT,
                    "purpose": "collections",
                    "field": item["field"],
                    "value": item["value"],
                    "derived_from": [evidence_id],
                },
            )
            assert written.status_code == 201, written.content
            assert written.json()["status"] == "suggested"
            claims.append(
                {
                    "subject": ACCOUNT,
                    "field": item["field"],
                    "value": item["value"],
                    "memory_class": item["memory_class"],
                    "derived_from": [f"memory:{written.json()['memory_id']}"],
                    "written_at": (now - timedelta(minutes=item["minutes_ago"]))
                    .astimezone(UTC)
                    .isoformat()
                    .replace("+00:00", "Z"),
                }
            )
        examples.append(len(claims))
        response = agent.post(RECONCILE, {**body, "claims": claims})
        assert response.status_code == 201, response.content
        assert len(response.json()["claims"]) == len(claims)
        assert response.json()["decision"] == expected

    check()
    assert len(examples) >= 10
    assert not MemoryRecord.objects.exclude(status=MemoryStatus.SUGGESTED).exists()
