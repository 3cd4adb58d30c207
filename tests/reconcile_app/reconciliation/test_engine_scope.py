"""What the engine asks before it compares a claim, and what `evidence: required` means.

Found by mutation testing the engine: each test here fails on a mutant of
reconciliation/engine.py or reconciliation/decision.py that every other test let through.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from reconcile_app.reconciliation import decision
from reconcile_app.reconciliation.types import Claim, FieldSpec, RuleSpec
from tests.reconcile_app.reconciliation.test_engine import (
    ALLOW_ALL,
    BINDING,
    NOW,
    SEED_EVIDENCE,
    classify,
    contract,
    read,
    reads,
)

WRITTEN = NOW - timedelta(minutes=10)


def test_a_claim_on_a_field_the_contract_does_not_read_is_unverified():
    claim = Claim("account-17", "letter_status", "sent", WRITTEN)

    verdict, reason, supporting = classify(claim, read())

    assert (verdict, supporting) == ("unverified", [])
    assert reason == "no authoritative field for this claim in the contract"


def test_a_claim_against_a_state_that_could_not_be_read_is_unverified_not_contradicted():
    claim = Claim("account-17", "collections_status", "collect", WRITTEN)

    verdict, reason, _ = classify(claim, read(status="unavailable"))

    assert verdict == "unverified"
    assert reason == "no current state to compare with (unavailable)"


def test_only_the_quarantined_class_is_quarantined():
    quarantined = frozenset({"procedural"})
    episodic = Claim("account-17", "collections_status", "hold", WRITTEN, memory_class="episodic")
    unclassed = Claim("account-17", "collections_status", "hold", WRITTEN)

    assert classify(episodic, read(), quarantined=quarantined)[0] == "confirmed"
    assert classify(unclassed, read(), quarantined=quarantined)[0] == "confirmed"


def test_a_claim_for_the_bound_purpose_is_in_scope():
    claim = Claim("account-17", "collections_status", "hold", WRITTEN, purpose="collections")

    assert classify(claim, read())[0] == "confirmed"


def test_a_required_field_without_evidence_required_needs_no_support():
    """`evidence: required` is declared per field: a required field that does not declare it
    is decided on its read alone (no `evidence_missing`)."""
    spec = contract(ALLOW_ALL)
    unevidenced = replace(
        spec,
        fields=(
            FieldSpec("collections_status", "case-service", True, 300, False),
            *spec.fields[1:],
        ),
    )
    state = reads("collect", "none")

    def decided(over):
        return decision.decide(
            over, BINDING, state, [], [], frozenset({"release_collections_hold"})
        )

    assert decided(unevidenced)["result"] == "allow"
    refused = decided(spec)
    assert (refused["result"], refused["reasons"][0]["code"]) == ("refuse", "evidence_missing")


def test_an_allow_rule_that_does_not_permit_the_proposed_action_denies_it():
    spec = replace(
        contract(RuleSpec("allow", "true", "", ("retain_manual_review",))),
        actions={
            "release_collections_hold": "collections_status",
            "retain_manual_review": "collections_status",
        },
    )
    capable = frozenset({"release_collections_hold", "retain_manual_review"})

    decided = decision.decide(spec, BINDING, reads("collect", "none"), SEED_EVIDENCE, [], capable)

    assert (decided["result"], decided["permitted_actions"]) == ("deny", [])
    assert decided["reasons"][0]["code"] == "action_not_permitted"


def test_one_required_field_not_ok_among_several_makes_the_contract_incomplete():
    spec = contract(ALLOW_ALL)
    two_required = replace(
        spec, fields=(spec.fields[0], replace(spec.fields[1], required=True, max_age_seconds=600))
    )
    state = reads("collect", None)  # collections_status ok, complaint_status unavailable

    decided = decision.decide(
        two_required, BINDING, state, SEED_EVIDENCE, [], frozenset({"release_collections_hold"})
    )

    codes = [reason["code"] for reason in decided["reasons"]]
    assert (decided["result"], codes) == ("refuse", ["state_unavailable", "contract_incomplete"])
