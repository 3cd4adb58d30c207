"""Superseding is one transaction: of two concurrent writers, exactly one wins."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections

from reconcile_app.errors import Conflict
from reconcile_app.models import MemoryRecord
from reconcile_app.services.evidence import evidence_append
from reconcile_app.services.memory import memory_admit
from tests.conftest import ago

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="real row-lock concurrency needs PostgreSQL"
)


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_supersessions_one_wins(agent):
    evidence_append(
        kind="observation",
        subject="math-eval",
        field="baseline",
        value="x",
        source="eval-registry",
        observed_at=ago(days=1),
        evidence_id="ev-c",
    )
    memory_admit(
        agent=agent.principal,
        memory_class="operational",
        subject="math-eval",
        purpose="eval",
        fact_key="baseline.race",
        value="ckpt-1",
        derived_from=["ev-c"],
        memory_id="race-v1",
    )
    writers = 8
    barrier = threading.Barrier(writers)
    outcomes: list[str] = []
    lock = threading.Lock()

    def write(index: int) -> None:
        try:
            barrier.wait()
            memory_admit(
                agent=agent.principal,
                memory_class="operational",
                subject="math-eval",
                purpose="eval",
                fact_key="baseline.race",
                value=f"ckpt-{index + 2}",
                derived_from=["ev-c"],
                supersedes="race-v1",
                memory_id=f"race-v2-{index}",
            )
            result = "won"
        except Conflict as exc:
            result = exc.code
        finally:
            connections.close_all()
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert sorted(outcomes) == ["supersession_conflict"] * (writers - 1) + ["won"]
    assert MemoryRecord.objects.get(memory_id="race-v1").status == "superseded"
    successors = MemoryRecord.objects.filter(supersedes__memory_id="race-v1")
    assert successors.count() == 1
    assert successors.get().status == "current"
