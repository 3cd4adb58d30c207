"""A drill that passes while the product is broken reports nothing: each guarantee a scenario
stands for, broken here on purpose, must fail the drill."""

from __future__ import annotations

from typing import Any

from drills_app.scenarios import DrillParameters, drill_suite_run
from reconcile_app.models import Effect
from reconcile_app.services.effects import commit


def test_a_reused_key_answered_with_the_original_receipt_fails_the_drill(db, monkeypatch):
    # Broken on purpose: a request under a used key with another body is answered from the
    # record (its original receipt) instead of 422, so the agent is told its second command
    # was accepted when the owner never ran it.
    existing = commit._existing

    def fingerprint_unchecked(key: str, fingerprint: str) -> Any:
        return existing(key, Effect.objects.get(idempotency_key=key).fingerprint)

    monkeypatch.setattr(commit, "_existing", fingerprint_unchecked)
    report = drill_suite_run(DrillParameters(repeat=1, scenarios=("idempotency_key_collision",)))

    trial = report["scenarios"][0]["protocol"]["trials_detail"][0]
    assert "silent_failures" in trial["failures"]
    assert not report["passed"]
    assert report["failures"] == ["protocol silent failures: 1"]
    # The chart's rate counts the trial in which it happened.
    assert report["totals"]["protocol"]["silent_failures_rate"] == 1.0
