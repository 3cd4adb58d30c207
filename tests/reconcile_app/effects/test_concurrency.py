"""Fifty concurrent commits against one record: no duplicate effect, no lost update.

Real row-lock concurrency, so PostgreSQL only. Each thread calls the service directly on its
own database connection, lined up on a barrier so the commits really race.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import connection, connections

from reconcile_app.choices import EffectStatus
from reconcile_app.errors import DomainError
from reconcile_app.models import Effect
from reconcile_app.services.effects import effect_commit
from sandbox_app.models import SandboxEffect, SandboxRecord
from tests.reconcile_app.effects.conftest import SUBJECT, reconcile

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="real row-lock concurrency needs PostgreSQL"
)

CALLERS = 50
ACTION = "release_collections_hold"


@dataclass
class Outcome:
    """What one caller saw: a commit result, a clean DomainError, or anything else."""

    status: str = ""
    replayed: bool = False
    receipt_id: str | None = None
    outcome: dict[str, Any] | None = None
    error_code: str = ""
    error_status: int = 0
    error_extra: dict[str, Any] | None = None
    unexpected: str = ""


def race(call: Callable[[int], Any]) -> list[Outcome]:
    """Run `call(index)` in CALLERS threads released together; collect what each saw."""
    barrier = threading.Barrier(CALLERS)
    outcomes: list[Outcome | None] = [None] * CALLERS

    def run(index: int) -> None:
        seen = Outcome()
        try:
            barrier.wait(timeout=30)
            result = call(index)
            seen.status = result.effect.status
            seen.replayed = result.replayed
            seen.receipt_id = (result.effect.receipt or {}).get("receipt_id")
            seen.outcome = result.effect.outcome
        except DomainError as exc:
            seen.error_code, seen.error_status, seen.error_extra = exc.code, exc.status, exc.extra
        except BaseException as exc:  # anything else is the finding
            seen.unexpected = f"{type(exc).__name__}: {exc}"
        finally:
            connections.close_all()
        outcomes[index] = seen

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(CALLERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads), "a caller hung"
    assert all(seen is not None for seen in outcomes)
    return [seen for seen in outcomes if seen is not None]


def record() -> SandboxRecord:
    return SandboxRecord.objects.get(
        source="case-service", subject=SUBJECT, field="collections_status"
    )


@pytest.mark.django_db(transaction=True)
def test_fifty_commits_with_one_key_apply_once(collectible, agent, eager_tasks):
    snapshot = reconcile(agent)
    assert snapshot["decision"]["result"] == "allow"
    assert record().version == 42

    def commit(_: int) -> Any:
        return effect_commit(
            principal=agent.principal,
            idempotency_key="race-same-key",
            if_match='"42"',
            snapshot_id=snapshot["snapshot_id"],
            action=ACTION,
            resulting_value="released",
        )

    outcomes = race(commit)

    assert [o.unexpected for o in outcomes if o.unexpected] == []
    answered = [o for o in outcomes if not o.error_code]
    refused = [o for o in outcomes if o.error_code]
    # Every refusal is the documented "still in flight" conflict, nothing else.
    assert {(o.error_code, o.error_status) for o in refused} <= {("idempotency_key_in_use", 409)}
    # One caller performed the commit; every other answer is a replay of the same receipt.
    assert sum(not o.replayed for o in answered) == 1
    assert len({o.receipt_id for o in answered}) == 1
    assert None not in {o.receipt_id for o in answered}
    assert {o.status for o in answered} <= {EffectStatus.ACCEPTED, EffectStatus.VERIFIED}
    assert len(answered) + len(refused) == CALLERS

    assert Effect.objects.filter(idempotency_key="race-same-key").count() == 1
    assert SandboxEffect.objects.filter(idempotency_key="race-same-key").count() == 1
    effect = Effect.objects.get(idempotency_key="race-same-key")
    assert effect.status == EffectStatus.VERIFIED  # the eager readback ran once it was accepted
    assert effect.receipt["receipt_id"] in {o.receipt_id for o in answered}
    assert (record().version, record().value) == (43, "released")  # moved by exactly one


@pytest.mark.django_db(transaction=True)
def test_fifty_commits_against_one_version_one_wins(collectible, agent, eager_tasks):
    snapshot = reconcile(agent)
    assert snapshot["fields"]["collections_status"]["version"] == 42

    def commit(index: int) -> Any:
        return effect_commit(
            principal=agent.principal,
            idempotency_key=f"race-key-{index:02d}",
            if_match='"42"',
            snapshot_id=snapshot["snapshot_id"],
            action=ACTION,
            resulting_value="released",
        )

    outcomes = race(commit)

    assert [o.unexpected for o in outcomes if o.unexpected] == []
    assert [(o.error_code, o.error_status) for o in outcomes if o.error_code] == []
    assert all(not o.replayed for o in outcomes)
    won = [o for o in outcomes if o.status in (EffectStatus.ACCEPTED, EffectStatus.VERIFIED)]
    lost = [o for o in outcomes if o.status == EffectStatus.REJECTED]
    assert len(won) == 1 and won[0].receipt_id
    assert len(lost) == CALLERS - 1
    for o in lost:
        assert o.outcome is not None
        assert (o.outcome["code"], o.outcome["expected"], o.outcome["found"]) == (
            "version_changed",
            42,
            43,
        )

    effects = Effect.objects.filter(idempotency_key__startswith="race-key-")
    assert effects.count() == CALLERS
    statuses = sorted(effects.values_list("status", flat=True))
    assert statuses.count(EffectStatus.REJECTED) == CALLERS - 1
    assert statuses.count(EffectStatus.VERIFIED) == 1  # eager readback of the winner
    assert not effects.filter(status__in=[EffectStatus.RECORDED, EffectStatus.SENT]).exists()
    # Zero lost updates: one version step, one owner ledger entry, the winner's value.
    assert SandboxEffect.objects.filter(idempotency_key__startswith="race-key-").count() == 1
    assert (record().version, record().value) == (43, "released")
    winner = effects.get(status=EffectStatus.VERIFIED)
    assert winner.resulting_version == 43
    assert winner.receipt["receipt_id"] == won[0].receipt_id
