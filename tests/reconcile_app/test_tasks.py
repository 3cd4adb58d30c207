from __future__ import annotations

from datetime import date

import pytest

from reconcile_app.choices import MemoryStatus
from reconcile_app.models import MemoryRecord
from reconcile_app.services.evidence import evidence_append
from reconcile_app.services.memory import memories_expire, memory_admit
from reconcile_app.tasks import memories_expire_task
from tests.conftest import ago


@pytest.fixture
def quota_memories(agent):
    evidence_append(
        kind="document",
        subject="cluster-a",
        field="quota",
        value=64,
        source="capacity-registry",
        observed_at=ago(days=1),
        evidence_id="ev-quota",
    )
    for memory_id, valid_until in (
        ("q-last-day", date(2026, 12, 31)),
        ("q-past", date(2026, 12, 30)),
        ("q-open", None),
    ):
        memory_admit(
            agent=agent.principal,
            memory_class="operational",
            subject="cluster-a",
            purpose="capacity",
            fact_key="quota.cluster-a",
            value=64,
            derived_from=["ev-quota"],
            valid_until=valid_until,
            memory_id=memory_id,
        )


def statuses() -> dict[str, str]:
    return dict(MemoryRecord.objects.values_list("memory_id", "status"))


def test_expiry_is_inclusive_through_valid_until(quota_memories):
    assert memories_expire(today=date(2026, 12, 31)) == 1
    assert statuses() == {
        "q-last-day": MemoryStatus.CURRENT,
        "q-past": MemoryStatus.EXPIRED,
        "q-open": MemoryStatus.CURRENT,
    }


def test_expiry_rerun_changes_nothing_twice(quota_memories):
    memories_expire(today=date(2027, 1, 1))
    assert memories_expire(today=date(2027, 1, 1)) == 0
    assert statuses()["q-last-day"] == MemoryStatus.EXPIRED


def test_expire_task_expires_what_passed_today_in_the_fact_timezone(agent, settings):
    from datetime import timedelta

    from reconcile_app.services.memory import fact_today

    settings.RECONCILE_FACT_TIMEZONE = "Pacific/Kiritimati"  # UTC+14: its today runs ahead
    today = fact_today()
    evidence_append(
        kind="document",
        subject="cluster-b",
        field="quota",
        value=8,
        source="capacity-registry",
        observed_at=ago(days=1),
        evidence_id="ev-q2",
    )
    for memory_id, valid_until in (("b-yesterday", today - timedelta(days=1)), ("b-today", today)):
        memory_admit(
            agent=agent.principal,
            memory_class="operational",
            subject="cluster-b",
            purpose="capacity",
            fact_key="quota.cluster-b",
            value=8,
            derived_from=["ev-q2"],
            valid_until=valid_until,
            memory_id=memory_id,
        )
    # Run the task body as a worker would; the broker round trip is not what is tested here.
    assert memories_expire_task.apply().get() == 1
    assert statuses() == {"b-yesterday": MemoryStatus.EXPIRED, "b-today": MemoryStatus.CURRENT}
