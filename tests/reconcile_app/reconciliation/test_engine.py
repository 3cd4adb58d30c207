"""The engine's pure functions against the seed reconciler's expected output (seed 000).

These pin the classification rules on fixed times (the seed's 2026-08-30 12:00 UTC), with no
database and no clock: the API tests cover the same rules in real time.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from reconcile_app.reconciliation import decision, engine
from reconcile_app.reconciliation.support import apply_freshness, support_for
from reconcile_app.reconciliation.types import (
    Binding,
    Claim,
    ContractSpec,
    EvidenceView,
    FieldRead,
    FieldSpec,
    RuleSpec,
)

NOW = datetime(2026, 8, 30, 12, 0, tzinfo=UTC)
BINDING = Binding(
    "agent", "account-17", "collections", "collections-contact-release", "release_collections_hold"
)


def evidence(
    evidence_id: str,
    value: str,
    observed_at: datetime,
    *,
    withdrawn: bool = False,
    field: str = "collections_status",
) -> EvidenceView:
    return EvidenceView(
        evidence_id,
        "0" * 64,
        "account-17",
        field,
        value,
        "case-ledger",
        observed_at,
        observed_at,
        withdrawn,
    )


def read(
    value: object = "hold",
    *,
    observed_at: datetime | None = None,
    status: str = "ok",
    valid_from: datetime | None = None,
) -> FieldRead:
    return FieldRead(
        field="collections_status",
        source="case-service",
        consistency="linearizable",
        status=status,
        value=value if status == "ok" else None,
        version=42 if status == "ok" else None,
        observed_at=observed_at or NOW - timedelta(minutes=2),
        valid_from=valid_from or NOW - timedelta(minutes=20),
        recorded_at=NOW,
        read_at=NOW,
    )


SEED_EVIDENCE = [
    evidence("ev-001", "collect", NOW - timedelta(hours=4)),
    evidence("ev-002", "hold", NOW - timedelta(minutes=20)),
]


def classify(
    claim: Claim,
    state: FieldRead,
    items: list[EvidenceView] = SEED_EVIDENCE,
    quarantined: frozenset[str] = frozenset(),
) -> tuple[str, str, list[str]]:
    fresh = apply_freshness(state, 300, NOW)
    return engine.classify(claim, BINDING, {"collections_status": fresh}, items, quarantined)


def test_seed_positive_claim_is_confirmed():
    claim = Claim(
        "account-17",
        "collections_status",
        "hold",
        NOW - timedelta(minutes=10),
        derived_from=("ev-002",),
    )
    verdict, _, supporting = classify(claim, read())
    assert (verdict, supporting) == ("confirmed", ["ev-002"])


def test_seed_stale_memory_is_superseded():
    claim = Claim(
        "account-17",
        "collections_status",
        "collect",
        NOW - timedelta(hours=3),
        derived_from=("ev-001",),
    )
    verdict, _, supporting = classify(claim, read())
    assert (verdict, supporting) == ("superseded", ["ev-002"])


def test_stale_state_is_checked_before_anything_else():
    claim = Claim("account-17", "collections_status", "hold", NOW - timedelta(minutes=10))
    verdict, _, _ = classify(claim, read(observed_at=NOW - timedelta(minutes=6)))
    assert verdict == "stale_state"


def test_freshness_limit_is_inclusive():
    exactly = apply_freshness(read(observed_at=NOW - timedelta(seconds=300)), 300, NOW)
    past = apply_freshness(read(observed_at=NOW - timedelta(seconds=301)), 300, NOW)
    assert (exactly.status, past.status) == ("ok", "stale")


def test_owner_that_vouches_for_no_time_is_stale():
    no_time = FieldRead(**{**read().__dict__, "observed_at": None})
    assert apply_freshness(no_time, 300, NOW).status == "stale"


def test_agreeing_claim_without_support_is_unverified():
    claim = Claim("account-17", "collections_status", "hold", NOW - timedelta(minutes=10))
    verdict, _, supporting = classify(claim, read(), [SEED_EVIDENCE[0]])
    assert (verdict, supporting) == ("unverified", [])


def test_withdrawn_support_does_not_confirm():
    claim = Claim("account-17", "collections_status", "hold", NOW - timedelta(minutes=10))
    items = [
        SEED_EVIDENCE[0],
        evidence("ev-002", "hold", NOW - timedelta(minutes=20), withdrawn=True),
    ]
    assert classify(claim, read(), items)[0] == "unverified"


def test_differing_claim_newer_than_the_support_is_contradicted():
    claim = Claim("account-17", "collections_status", "collect", NOW - timedelta(minutes=10))
    assert classify(claim, read())[0] == "contradicted"


def test_differing_claim_without_written_at_is_contradicted_not_superseded():
    claim = Claim("account-17", "collections_status", "collect", None)
    assert classify(claim, read())[0] == "contradicted"


def test_claim_for_another_subject_or_purpose_is_out_of_scope():
    other_subject = Claim("account-18", "collections_status", "hold", NOW)
    other_purpose = Claim("account-17", "collections_status", "hold", NOW, purpose="marketing")
    assert classify(other_subject, read())[0] == "out_of_scope"
    assert classify(other_purpose, read())[0] == "out_of_scope"


def test_claim_of_a_quarantined_class_is_quarantined():
    claim = Claim("account-17", "collections_status", "hold", NOW, memory_class="episodic")
    assert classify(claim, read(), quarantined=frozenset({"episodic"}))[0] == "quarantined"


def test_claim_recalled_from_a_quarantined_record_is_quarantined_first():
    held = {"mem-1": "qua_1"}
    fresh = {"collections_status": apply_freshness(read(), 300, NOW)}
    recalled = Claim("account-17", "collections_status", "hold", NOW, memory_id="mem-1")
    elsewhere = Claim("account-18", "collections_status", "hold", NOW, memory_id="mem-1")
    other = Claim("account-17", "collections_status", "hold", NOW, memory_id="mem-2")
    for claim in (recalled, elsewhere):
        verdict, reason, supporting = engine.classify(
            claim, BINDING, fresh, SEED_EVIDENCE, frozenset(), held
        )
        assert (verdict, supporting) == ("quarantined", [])
        assert reason == "memory mem-1 is quarantined (qua_1)"
    assert engine.classify(other, BINDING, fresh, SEED_EVIDENCE, frozenset(), held)[0] == (
        "confirmed"
    )


def test_content_keeps_only_the_quarantines_of_records_its_claims_cite():
    def content(claims: list[Claim], held: dict[str, str]) -> dict:
        return engine.evaluate(
            contract=contract(DENY_HOLD, ALLOW_ALL),
            binding=BINDING,
            raw_reads=list(reads("hold", "none").values()),
            evidence=SEED_EVIDENCE,
            claims=claims,
            quarantined_classes=frozenset(),
            capable_actions=frozenset({"release_collections_hold"}),
            valid_time=NOW,
            recorded_time=NOW,
            quarantined_memories=held,
        ).content

    held = {"mem-1": "qua_1", "mem-9": "qua_9"}
    cited = content(
        [Claim("account-17", "collections_status", "hold", NOW, memory_id="mem-1")], held
    )
    assert cited["quarantined_memories"] == {"mem-1": "qua_1"}
    assert cited["claims"][0]["memory_id"] == "mem-1"
    stated = content([Claim("account-17", "collections_status", "hold", NOW)], held)
    assert "quarantined_memories" not in stated
    assert "memory_id" not in stated["claims"][0]
    # The decision never depends on the claims, recalled or not.
    assert cited["decision"] == stated["decision"]


def test_same_value_does_not_confuse_numbers_strings_and_booleans():
    items = [evidence("ev-1", "1", NOW - timedelta(minutes=5))]
    assert support_for("account-17", "collections_status", 1, items) == []
    items = [evidence("ev-2", True, NOW - timedelta(minutes=5))]  # type: ignore[arg-type]
    assert support_for("account-17", "collections_status", 1, items) == []


# --- decide ------------------------------------------------------------------------------------


def contract(*rules: RuleSpec, contradictions: str = "escalate") -> ContractSpec:
    return ContractSpec(
        pk=1,
        decision_class="collections-contact-release",
        version="7.3",
        purpose="collections",
        policy_version="p1",
        contradictions=contradictions,
        commit_window_seconds=120,
        reducer="",
        content_hash="h",
        fields=(
            FieldSpec("collections_status", "case-service", True, 300, True),
            FieldSpec("complaint_status", "complaints-service", False, 600, False),
        ),
        actions={"release_collections_hold": "collections_status"},
        rules=rules,
    )


DENY_HOLD = RuleSpec("deny", 'fields.collections_status == "hold"', "hardship_hold", ())
ESCALATE_OPEN = RuleSpec("escalate", 'fields.complaint_status == "open"', "open_complaint", ())
ALLOW_ALL = RuleSpec("allow", "true", "", ("release_collections_hold",))


def reads(status: str, complaint: str | None) -> dict[str, FieldRead]:
    complaint_read = FieldRead(
        field="complaint_status",
        source="complaints-service",
        consistency="eventual",
        status="ok" if complaint else "unavailable",
        value=complaint,
        version=1 if complaint else None,
        observed_at=NOW,
        valid_from=NOW,
        recorded_at=NOW,
        read_at=NOW,
    )
    return {"collections_status": read(status), "complaint_status": complaint_read}


def decide(
    spec: ContractSpec, state: dict[str, FieldRead], contradictions: list | None = None
) -> dict:
    return decision.decide(
        spec,
        BINDING,
        state,
        [*SEED_EVIDENCE, evidence("ev-c", "collect", NOW - timedelta(minutes=30))],
        contradictions or [],
        frozenset({"release_collections_hold"}),
    )


def test_decide_deny_beats_escalate_beats_allow():
    spec = contract(DENY_HOLD, ESCALATE_OPEN, ALLOW_ALL)
    assert decide(spec, reads("hold", "open"))["result"] == "deny"
    assert decide(spec, reads("collect", "open"))["result"] == "escalate"
    assert decide(spec, reads("collect", "none"))["result"] == "allow"


def test_decide_escalates_when_a_condition_cannot_evaluate():
    # complaint_status is absent (unavailable): `fields.complaint_status` cannot evaluate.
    spec = contract(ESCALATE_OPEN, ALLOW_ALL)
    decision = decide(spec, reads("collect", None))
    assert decision["result"] == "escalate"
    assert decision["reasons"][0]["code"] == "open_complaint"


def test_decide_without_matching_allow_denies_no_rule_matched():
    spec = contract(RuleSpec("allow", 'fields.collections_status == "never"', "", ("x",)))
    decision = decide(spec, reads("collect", "none"))
    assert (decision["result"], decision["reasons"][0]["code"]) == ("deny", "no_rule_matched")


def test_decide_contradictions_escalate_or_refuse_by_contract():
    contradiction = [{"kind": "evidence_vs_state", "detail": "disagree"}]
    escalating = decide(contract(ALLOW_ALL), reads("collect", "none"), contradiction)
    refusing = decide(
        contract(ALLOW_ALL, contradictions="refuse"), reads("collect", "none"), contradiction
    )
    assert (escalating["result"], escalating["reasons"][0]["code"]) == ("escalate", "contradiction")
    assert (refusing["result"], refusing["reasons"][0]["code"]) == ("refuse", "contradiction")
