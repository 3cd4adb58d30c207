"""Two writes of a memory under the same chosen `memory_id` at once (PostgreSQL).

The id was looked up, then inserted: both writes found it free, and the second insert broke
the unique index and answered 500. It is the answer a write under a held id gets one after
the other: 409 `memory_id_taken`, and nothing of the second write kept."""

from __future__ import annotations

import pytest
from django.db import connection

from lineage_app.models import Node
from reconcile_app.models import MemoryRecord
from reconcile_app.services import memory as memory_module
from reconcile_app.services.evidence import evidence_append
from reconcile_app.services.memory import memory_admit
from tests.conftest import ago
from tests.races import paused_race

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]


def test_a_memory_id_taken_meanwhile_is_refused_as_taken_not_a_500(estate, agent, monkeypatch):
    evidence_append(
        kind="observation",
        subject="P17",
        field="pallet_bay",
        value="B-07",
        source="case-ledger",
        observed_at=ago(minutes=5),
        evidence_id="ev-bay",
    )

    def write(value: str) -> str:
        return memory_admit(
            agent=agent.principal,
            memory_class="episodic",
            subject="P17",
            purpose="fulfilment",
            field="pallet_bay",
            value=value,
            derived_from=["ev-bay"],
            memory_id="mem-retried",
        ).status

    seen = paused_race(
        monkeypatch, memory_module, "new_record_id", lambda: write("B-07"), lambda: write("B-08")
    )

    assert (seen["write"], seen["change"]) == ("memory_id_taken", "current"), seen
    assert list(MemoryRecord.objects.values_list("memory_id", "value")) == [("mem-retried", "B-08")]
    assert Node.objects.filter(kind="memory", ref="mem-retried").count() == 1
