"""A fact record is stamped once its write holds its locks, not when the request arrived.

A write that waited on a fact key's freeze, on the record it supersedes or on SQLite's write
lock committed a `recorded_at` already in the past: an `as_of` answer given for that moment
while it waited (no record yet) changed once it committed.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from reconcile_app.models import MemoryRecord
from reconcile_app.services import memory
from tests.reconcile_app.facts.conftest import authority, remember

KEY = "baseline.math-eval"
WAITED = timedelta(seconds=30)


def test_a_write_that_waited_on_its_locks_is_stamped_after_the_wait(registry, agent, monkeypatch):
    authority(KEY, revision="registry@r18")
    clock: dict[str, datetime] = {"now": timezone.now()}
    monkeypatch.setattr(timezone, "now", lambda: clock["now"])
    took_locks = memory.fact_keys_held

    def held_after_a_wait(*args, **kwargs):
        took_locks(*args, **kwargs)
        clock["now"] += WAITED  # the freeze it waited on ended half a minute later

    monkeypatch.setattr(memory, "fact_keys_held", held_after_a_wait)
    remember(agent, KEY, "baseline-v17", "ckpt-0412", "registry@r18")

    record = MemoryRecord.objects.get(memory_id="baseline-v17")
    assert record.recorded_at == clock["now"]
    assert record.statuses.get().at == clock["now"]
