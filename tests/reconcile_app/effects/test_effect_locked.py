"""The effect lock joins the rows its representation names, except those its caller holds."""

from __future__ import annotations

from django.db import transaction

from reconcile_app.models import Effect
from reconcile_app.services.effects.state import REPRESENTED, effect_locked
from tests.reconcile_app.effects.conftest import released


def _represented(effect):
    return (
        effect.source.name,
        effect.snapshot.snapshot_id,
        effect.decision.decision_id,
        effect.principal.name,
        effect.escalation,
    )


def test_the_rows_the_caller_holds_are_kept_not_joined(
    collectible, agent, django_assert_num_queries, django_capture_on_commit_callbacks
):
    known = Effect.objects.select_related(*REPRESENTED).get(
        pk=released(agent, django_capture_on_commit_callbacks, "lock-1").pk
    )
    with transaction.atomic():
        with django_assert_num_queries(1):
            locked = effect_locked(known.pk, known=known)
        with django_assert_num_queries(0):
            assert _represented(locked) == _represented(known)
    assert locked.snapshot is known.snapshot


def test_the_rows_the_caller_does_not_hold_are_joined(
    collectible, agent, django_assert_num_queries, django_capture_on_commit_callbacks
):
    effect = released(agent, django_capture_on_commit_callbacks, "lock-2")
    known = Effect.objects.select_related("snapshot").get(pk=effect.pk)
    with transaction.atomic():
        with django_assert_num_queries(1):
            locked = effect_locked(known.pk, known=known)
        with django_assert_num_queries(0):
            represented = _represented(locked)
    assert represented[1:4] == (
        effect.snapshot.snapshot_id,
        effect.decision.decision_id,
        effect.principal.name,
    )
    assert locked.snapshot is known.snapshot
