from __future__ import annotations

from drills_app.invariance import minimal_history, run_invariance
from tests.conftest import make_agent


def test_paired_histories_permit_the_same_actions(estate):
    agent = make_agent("inv", ["collections-letter:send_collections_letter"])
    report = run_invariance(principal=agent.principal, pairs=12, seed=7, run_id="t")
    assert report.pairs == 12
    assert report.ok, report.examples
    # Both sides of the policy were exercised: histories that allow the letter and ones that
    # deny it (a run refusing every subject would agree with itself and test nothing).
    assert {"allow", "deny"} <= set(report.results), report.results
    assert "refuse" not in report.results, report.results


def test_minimal_history_reaches_the_same_state():
    assert minimal_history({"hardship_active": True, "missed_payments": 2}) == [
        "PaymentMissed",
        "PaymentMissed",
        "HardshipApproved",
    ]
    assert minimal_history({"hardship_active": False, "missed_payments": 0}) == []
