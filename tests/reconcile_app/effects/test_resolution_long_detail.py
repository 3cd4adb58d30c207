"""A resolution attempt is recorded whatever length of reason the owner's answer gave.

`last_check_error` holds 500 characters. The first check's note was cut to fit
(state.effect_check_failed), a resolution's was not: an adapter's lookup detail that quoted
a long answer (an `http` owner's garbled headers come back as up to 100 KiB of protocol
error) made every resolution of the effect fail on PostgreSQL (value too long), so the
attempt, its backoff and its reason were never recorded and the sweep asked again at once.
"""

from __future__ import annotations

from reconcile_app.models import EffectEvent
from reconcile_app.services.effects import effect_resolve_unknown
from reconcile_app.sources import LookupOutcome, LookupResult
from sandbox_app.adapter import SandboxAdapter
from tests.reconcile_app.effects.test_resolution_evidence import never_executed  # noqa: F401

SAID = "illegal header line: " + "X" * 5000


def test_a_long_ledger_answer_is_recorded_cut_to_fit(never_executed, monkeypatch):
    monkeypatch.setattr(
        SandboxAdapter,
        "lookup_effect",
        lambda self, key: LookupResult(outcome=LookupOutcome.UNAVAILABLE, detail=SAID),
    )

    effect = effect_resolve_unknown(effect_id=never_executed.pk)

    assert (effect.status, effect.resolution_attempts) == ("unknown", 1)
    assert effect.next_check_at is not None
    assert len(effect.last_check_error) <= 500
    assert effect.last_check_error.startswith("owner's ledger unavailable: illegal header line")
    attempt = EffectEvent.objects.get(effect=effect, kind="resolution_attempt")
    assert attempt.detail["unresolved"] == effect.last_check_error
