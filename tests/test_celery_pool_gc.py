"""A Celery pool process collects the garbage its tasks leave in the oldest generation
(config/celery.py, `pool_process_garbage_baseline`), instead of holding it until it
outnumbers a quarter of start-up's objects.

Each case runs in its own interpreter, loaded as a worker is (Django, the Celery app and its
tasks), so freezing and collecting there leaves this test process alone.
"""

from __future__ import annotations

import pytest

from tests.fresh_interpreter import fresh_python_json

POOL_PROCESS = """
import gc, json, sys, weakref

import django
django.setup()
from celery.signals import worker_process_init
from config.celery import app
app.loader.import_default_modules()
gc.collect()  # as the worker's start-up ends: its full collections counted all of this

if sys.argv[1] == "hooked":
    worker_process_init.send(sender=None)

class Cycle:
    pass

# What a task leaves: reference cycles that were still in use when a young collection
# moved them to the oldest generation (done here with an explicit one), then dropped.
held = []
for _ in range(2_000):
    cycle = Cycle()
    cycle.me = cycle
    cycle.rows = [(n, str(n)) for n in range(20)]
    held.append(cycle)
gc.collect(1)
dropped = [weakref.ref(cycle) for cycle in held]
del held, cycle

# Later tasks' short-lived cycles: the collector's automatic runs, no explicit collection.
full_before = gc.get_stats()[2]["collections"]
for _ in range(300_000):
    later = []
    later.append(later)
print(json.dumps({
    "frozen": gc.get_freeze_count(),
    "full_collections": gc.get_stats()[2]["collections"] - full_before,
    "still_held": sum(ref() is not None for ref in dropped),
}))
"""


@pytest.mark.parametrize("mode", ["plain", "hooked"])
def test_a_pool_process_frees_the_cycles_its_tasks_dropped(mode):
    found = fresh_python_json(POOL_PROCESS, mode)

    if mode == "plain":
        # Python's own rule, which the hook exists for: with start-up's objects counted,
        # the dropped cycles wait for a full collection that does not come.
        assert found["frozen"] == 0
        assert found["full_collections"] == 0
        assert found["still_held"] == 2_000
    else:
        assert found["frozen"] > 100_000
        assert found["full_collections"] >= 1
        assert found["still_held"] == 0
