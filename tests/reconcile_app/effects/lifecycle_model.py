"""The world a stateful model of the effect lifecycle runs in (test_lifecycle_stateful.py):
a clock it moves, the queue the readback and resolution tasks land in (a worker rule runs
them), the owner's executions counted per key, database failures injected once where asked,
and the invariants DESIGN.md and docs/api.md state, checked against the database."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from unittest.mock import patch

from django.db import OperationalError
from django.test import TestCase
from django.utils import timezone

from reconcile_app.choices import EffectStatus as S
from reconcile_app.models import AuditEvent, DecisionSnapshot, Effect, EffectEvent
from reconcile_app.services.effects.readback import OwnerUnavailable, effect_readback
from reconcile_app.services.effects.resolution import effect_resolve_unknown
from reconcile_app.services.effects.state import RETRYABLE_REJECTIONS

# docs/api.md's transitions, the documented retries among them: rejected → recorded (a request
# that never reached the owner, sent again), a failed postcondition read again or resolved by
# an operator (RESOLVABLE).
ALLOWED = {
    (None, S.RECORDED),
    (S.RECORDED, S.SENT),
    (S.RECORDED, S.REJECTED),
    (S.SENT, S.ACCEPTED),
    (S.SENT, S.REJECTED),
    (S.SENT, S.UNKNOWN),
    (S.ACCEPTED, S.VERIFIED),
    (S.ACCEPTED, S.POSTCONDITION_FAILED),
    (S.POSTCONDITION_FAILED, S.VERIFIED),
    (S.POSTCONDITION_FAILED, S.POSTCONDITION_FAILED),
    (S.POSTCONDITION_FAILED, S.ACCEPTED),
    (S.POSTCONDITION_FAILED, S.NOT_EXECUTED),
    (S.UNKNOWN, S.ACCEPTED),
    (S.UNKNOWN, S.NOT_EXECUTED),
    (S.REJECTED, S.RECORDED),
}
# Timeline entries that change no status, and the statuses they may be written in.
NOTES = {
    "resolution_attempt": {S.UNKNOWN},
    "check_requested": {S.ACCEPTED, S.POSTCONDITION_FAILED, S.UNKNOWN},
}
UNSETTLED = (S.RECORDED, S.SENT, S.ACCEPTED)


def status_after(event: EffectEvent) -> str:
    """The status a timeline entry says the effect moved to."""
    kind, detail = event.kind, event.detail
    simple = {
        "recorded": S.RECORDED,
        "sent": S.SENT,
        "receipt": S.ACCEPTED,
        "rejected": S.REJECTED,
        "timeout": S.UNKNOWN,
        "retried": S.RECORDED,
    }
    if kind in simple:
        return simple[kind]
    if kind == "readback":
        return str(detail["result"])
    if kind == "resolution":
        return S.ACCEPTED if "receipt" in detail else S.NOT_EXECUTED
    if kind == "manual_resolution":
        return S.ACCEPTED if detail["outcome"] == "succeeded" else S.NOT_EXECUTED
    raise AssertionError(f"timeline entry {kind!r} is not in the model")


def timeline_replayed(effect: Effect) -> list[str]:
    """The statuses the effect's timeline walks through, each step checked against the
    transitions allowed; the last must be the effect's status (the trail matches)."""
    status: str | None = None
    rejected_code = ""
    walked: list[str] = []
    for event in EffectEvent.objects.filter(effect=effect).order_by("id"):
        if event.kind in NOTES:
            assert status in NOTES[event.kind], (effect.idempotency_key, event.kind, status)
            continue
        after = status_after(event)
        where = (effect.idempotency_key, status, event.kind, after, walked)
        assert (status, after) in ALLOWED, f"transition not allowed: {where}"
        if status == S.RECORDED and after == S.REJECTED:
            assert event.detail.get("code") == "not_sent", where
        if status == S.REJECTED and after == S.RECORDED:
            assert rejected_code in RETRYABLE_REJECTIONS, where
        if after == S.REJECTED:
            rejected_code = event.detail.get("code", "")
        status = after
        walked.append(after)
    assert status == effect.status, (
        f"{effect.idempotency_key}: timeline ends {status}, row says {effect.status}: {walked}"
    )
    return walked


class Clock:
    """`timezone.now`, moved forward by the model (the sweep's grace, commit windows)."""

    def __init__(self) -> None:
        self.real = timezone.now
        self.offset = timedelta(0)

    def now(self) -> datetime:
        return self.real() + self.offset


@dataclass
class World:
    clock: Clock = field(default_factory=Clock)
    queued: list[tuple[str, int]] = field(default_factory=list)
    executed: Counter[str] = field(default_factory=Counter)
    armed: set[str] = field(default_factory=set)
    snapshots: dict[str, tuple[Any, ...]] = field(default_factory=dict)

    def reset(self) -> None:
        self.clock.offset = timedelta(0)
        self.queued.clear()
        self.executed.clear()
        self.armed.clear()
        self.snapshots.clear()

    @contextmanager
    def installed(self) -> Iterator[World]:
        from reconcile_app import tasks
        from reconcile_app.services.effects import commit, state
        from sandbox_app.services import effects as owner

        real_execute = owner._execute

        def execute(source: str, key: str, *args: Any, **kwargs: Any) -> Any:
            receipt = real_execute(source, key, *args, **kwargs)
            self.executed[key] += 1
            return receipt

        from sandbox_app import adapter

        real_apply = adapter.sandbox_effect_apply

        def apply(**kwargs: Any) -> Any:
            try:
                return real_apply(**kwargs)
            finally:
                if "stall" in self.armed:
                    # The owner answered; then the sender stalls past the sweep's grace (a
                    # paused process, a slow write) while the sweep and a worker run.
                    self.armed.discard("stall")
                    self.clock.offset += timedelta(seconds=61)
                    from reconcile_app.services.effects.sweep import effects_sweep

                    effects_sweep()
                    self.work(len(self.queued))

        with ExitStack() as stack:
            stack.enter_context(patch("django.utils.timezone.now", self.clock.now))
            stack.enter_context(patch.object(adapter, "sandbox_effect_apply", apply))
            stack.enter_context(patch.object(owner, "_execute", execute))
            for task, kind in (
                (tasks.effect_readback_task, "readback"),
                (tasks.effect_resolve_task, "resolution"),
            ):
                stack.enter_context(patch.object(task, "delay", self._queue(kind)))
            for module, name, point in (
                (commit, "effect_lineage", "record"),
                (commit, "effect_mark_sent", "send"),
                (state, "evidence_append", "accept"),
            ):
                real = getattr(module, name)
                stack.enter_context(patch.object(module, name, self._failing(point, real)))
            yield self

    def _queue(self, kind: str) -> Callable[[int], None]:
        def delay(effect_id: int) -> None:
            self.queued.append((kind, effect_id))

        return delay

    def _failing(self, point: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            if point in self.armed:
                self.armed.discard(point)
                raise OperationalError(f"injected: the database failed at {point}")
            return real(*args, **kwargs)

        return call

    @staticmethod
    def request(send: Callable[[], Any]) -> Any:
        """One API request, its on-commit work run as a committed request's would be."""
        with TestCase.captureOnCommitCallbacks(execute=True):
            return send()

    def work(self, count: int) -> None:
        """A worker takes `count` queued tasks; one that cannot conclude is dropped (its
        retries are the sweep's to make: next_check_at says when)."""
        for _ in range(min(count, len(self.queued))):
            kind, effect_id = self.queued.pop(0)
            run = effect_readback if kind == "readback" else effect_resolve_unknown
            try:
                with TestCase.captureOnCommitCallbacks(execute=True):
                    run(effect_id=effect_id)
            except (OwnerUnavailable, OperationalError):
                pass

    def snapshot_seen(self, snapshot_id: str) -> None:
        self.snapshots[snapshot_id] = _snapshot_row(snapshot_id)

    def check(self) -> None:
        """The invariants, after every step."""
        for snapshot_id, row in self.snapshots.items():
            assert _snapshot_row(snapshot_id) == row, f"snapshot {snapshot_id} changed"
        over = {key: n for key, n in self.executed.items() if n > 1}
        assert not over, f"the owner executed these keys more than once: {over}"
        effects = Effect.objects.select_related("snapshot")
        for effect in effects:
            timeline_replayed(effect)
            ran = self.executed[effect.idempotency_key]
            # What the owner did, against what Reconcile concluded without a person's word.
            if effect.status == S.REJECTED or (
                effect.status == S.NOT_EXECUTED
                and not effect.events.filter(kind="manual_resolution").exists()
            ):
                assert not ran, f"{effect.idempotency_key} is {effect.status}; the owner ran it"
            decision = effect.snapshot.content["decision"]
            assert decision["result"] == "allow", (effect.idempotency_key, decision)
            assert effect.action in decision["permitted_actions"], effect.idempotency_key
            read = effect.snapshot.content["fields"][effect.field]
            assert effect.expected_version == read["version"], effect.idempotency_key
        resolutions = EffectEvent.objects.filter(kind="manual_resolution").count()
        assert resolutions == AuditEvent.objects.filter(action="effect.resolve").count()
        assert not EffectEvent.objects.exclude(effect__in=Effect.objects.all()).exists()

    def unsettled(self) -> list[tuple[str, str]]:
        return list(
            Effect.objects.filter(status__in=UNSETTLED).values_list("idempotency_key", "status")
        )


def _snapshot_row(snapshot_id: str) -> tuple[Any, ...]:
    row = DecisionSnapshot.objects.filter(snapshot_id=snapshot_id).values_list(
        "content_hash", "content", "result", "issued_at", "principal_id", "contract_id"
    )
    return tuple(row.get())
