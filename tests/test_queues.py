"""Task routing (config/queues.py): readbacks apart from corrections and drills, each queue
its own, and a worker started without -Q consumes every one of them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings

from config.celery import app
from config.queues import CORRECTIONS, DEFAULT, DRILLS, READBACKS, TASK_QUEUES

app.loader.import_default_modules()
PRODUCT_TASKS = sorted(name for name in app.tasks if not name.startswith("celery."))


def queue_of(task_name: str) -> str:
    return app.amqp.router.route({}, task_name)["queue"].name


@pytest.mark.parametrize(
    ("task_name", "queue"),
    [
        ("reconcile_app.tasks.effect_readback_task", READBACKS),
        ("reconcile_app.tasks.effect_resolve_task", READBACKS),
        ("reconcile_app.tasks.effects_sweep_task", READBACKS),
        ("reconcile_app.tasks.correction_complete_task", CORRECTIONS),
        ("reconcile_app.tasks.quarantine_apply_task", CORRECTIONS),
        ("reconcile_app.drills.tasks.execute_drill_run", DRILLS),
        ("reconcile_app.tasks.contract_activation_task", DEFAULT),
        ("reconcile_app.tasks.memories_expire_task", DEFAULT),
        ("reconcile_app.tasks.quarantines_expire_task", DEFAULT),
        ("reconcile_app.tasks.bulk_job_run_task", DEFAULT),
        ("reconcile_app.tasks.bulk_jobs_sweep_task", DEFAULT),
        ("reconcile_app.tasks.lost_work_sweep_task", DEFAULT),
    ],
)
def test_each_task_goes_to_its_queue(task_name, queue):
    assert task_name in PRODUCT_TASKS
    assert queue_of(task_name) == queue


def test_every_task_lands_on_a_declared_queue():
    assert {queue_of(name) for name in PRODUCT_TASKS} == set(TASK_QUEUES)


def test_a_worker_without_dash_q_consumes_every_queue():
    assert set(app.amqp.queues) == set(TASK_QUEUES)


def test_each_queue_is_bound_alone_so_a_message_is_delivered_once():
    # Queues sharing an exchange and routing key would each receive a copy of every message.
    bindings = {(queue.exchange.name, queue.routing_key) for queue in app.amqp.queues.values()}
    assert bindings == {(name, name) for name in TASK_QUEUES}


def test_the_deploy_guides_queue_table_names_every_task_on_its_queue():
    # docs/deploy.md, "Workers, per queue", is what a deployer sizes each queue's workers by;
    # it left the bulk jobs and the lost-work sweep off `default`.
    text = (Path(settings.BASE_DIR) / "docs" / "deploy.md").read_text()
    table = text[text.index("## Workers, per queue") :].split("\n\n")[2]
    documented = {
        task: queue
        for queue, tasks in re.findall(r"^\| `(\w+)` \| ([^|]+) \|", table, re.M)
        for task in re.findall(r"`(\w+)`", tasks)
    }

    assert documented == {name.rsplit(".", 1)[1]: queue_of(name) for name in PRODUCT_TASKS}


def test_a_scheduled_sweep_left_untaken_for_ten_periods_expires():
    # Workers back after an outage would otherwise work through every sweep queued meanwhile.
    for name, entry in settings.CELERY_BEAT_SCHEDULE.items():
        assert entry["options"] == {"expires": 10 * entry["schedule"]}, name
