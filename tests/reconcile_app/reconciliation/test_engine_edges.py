"""The engine's edges, on the seed's fixed clock: where "later", "after" and "ahead" begin.

Seed 000's reconciler supersedes a claim only on support observed *after* it was written
(`e.observed_at > claim.written_at`); a contradiction is evidence observed *after* the
state's valid time (`support.source_contradictions`); an owner's `observed_at` is untrusted
only *more than* 300 s ahead of the read (docs/api.md). Equal instants are none of these.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from reconcile_app.instants import FUTURE_TOLERANCE
from reconcile_app.reconciliation.support import source_contradictions, support_for
from reconcile_app.reconciliation.types import Claim
from reconcile_app.services.owner_reads import vouched_ahead_judged
from tests.reconcile_app.reconciliation.test_engine import NOW, classify, evidence, read

WRITTEN = NOW - timedelta(hours=3)


def test_support_observed_when_the_claim_was_written_does_not_supersede_it():
    claim = Claim("account-17", "collections_status", "collect", WRITTEN)
    same_instant = [evidence("ev-hold", "hold", WRITTEN)]

    verdict, _, supporting = classify(claim, read(), same_instant)

    assert (verdict, supporting) == ("contradicted", [])


def test_a_superseded_claim_names_only_the_support_observed_after_it():
    claim = Claim("account-17", "collections_status", "collect", WRITTEN)
    items = [
        evidence("ev-at", "hold", WRITTEN),
        evidence("ev-after", "hold", WRITTEN + timedelta(seconds=1)),
    ]

    verdict, _, supporting = classify(claim, read(), items)

    assert (verdict, supporting) == ("superseded", ["ev-after"])


def test_a_claim_that_names_no_purpose_is_in_scope():
    claim = Claim("account-17", "collections_status", "hold", NOW - timedelta(minutes=10))
    assert claim.purpose == ""

    assert classify(claim, read())[0] == "confirmed"


def _contradictions(observed_at):
    state = read("hold", valid_from=NOW - timedelta(minutes=20))
    items = [evidence("ev-collect", "collect", observed_at)]
    return source_contradictions("account-17", {"collections_status": state}, items)


def test_evidence_observed_at_the_states_valid_time_does_not_contradict_it():
    assert _contradictions(NOW - timedelta(minutes=20)) == []
    later = _contradictions(NOW - timedelta(minutes=20) + timedelta(seconds=1))
    assert [item["other"]["ref"] for item in later] == ["ev-collect"]


def test_an_owner_exactly_at_the_skew_tolerance_ahead_is_still_judged_by_age():
    at_tolerance = replace(read(), observed_at=NOW + FUTURE_TOLERANCE)
    beyond = replace(read(), observed_at=NOW + FUTURE_TOLERANCE + timedelta(milliseconds=1))

    assert vouched_ahead_judged(at_tolerance).status == "ok"
    assert vouched_ahead_judged(beyond).status == "stale"


def test_evidence_for_another_field_or_subject_supports_nothing():
    """The same value observed for another field of the account, or for another account, is
    not evidence for this one: a claim agreeing with the state then stands unsupported
    (unverified), not confirmed."""
    claim = Claim("account-17", "collections_status", "hold", NOW - timedelta(minutes=10))
    observed = NOW - timedelta(minutes=20)
    other_field = evidence("ev-field", "hold", observed, field="letter_status")
    other_subject = replace(evidence("ev-subject", "hold", observed), subject="account-18")

    for elsewhere in ([other_field], [other_subject]):
        assert support_for("account-17", "collections_status", "hold", elsewhere) == []
        assert classify(claim, read(), elsewhere)[0] == "unverified"


def test_only_this_subjects_evidence_for_this_field_contradicts_the_state():
    state = read("hold", valid_from=NOW - timedelta(minutes=20))
    later = NOW - timedelta(minutes=5)
    other_field = evidence("ev-field", "collect", later, field="letter_status")
    other_subject = replace(evidence("ev-subject", "collect", later), subject="account-18")

    for item in (other_field, other_subject):
        found = source_contradictions("account-17", {"collections_status": state}, [item])
        assert found == [], item.evidence_id
    # Nor does it hide this field's own, earlier-observed, agreeing support behind it.
    agreeing = evidence("ev-hold", "hold", NOW - timedelta(minutes=10))
    both = source_contradictions(
        "account-17", {"collections_status": state}, [agreeing, other_field, other_subject]
    )
    assert both == []
