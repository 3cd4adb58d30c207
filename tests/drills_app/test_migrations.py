"""DrillRun moved out of reconcile_app in Django's state only: a run stored before the move is
still there after it, read by drills_app, and the metrics still report it as the last drill."""

from __future__ import annotations

import pytest
from django.contrib.contenttypes.models import ContentType
from django.utils import timezone

from drills_app.choices import DrillRunKind, DrillRunStatus
from drills_app.models import DrillRun
from drills_app.selectors import console_drill_run
from reconcile_app.selectors.metrics import operational_metrics
from tests.migrations import migrated_back_to

BEFORE_THE_MOVE = [("reconcile_app", "0012_sandbox_moves_to_sandbox_app")]


@pytest.mark.django_db(transaction=True)
def test_a_run_stored_before_the_move_is_read_by_drills_app_after_it(operator):
    content_type = ContentType.objects.get_for_model(DrillRun).pk
    now = timezone.now()
    with migrated_back_to(BEFORE_THE_MOVE) as old:
        stored = old.get_model("reconcile_app", "DrillRun").objects.create(
            kind="drill",
            parameters={"repeat": 1},
            status="complete",
            results={"totals": {"protocol": {"stale_memory_escapes": 0}}},
            passed=True,
            started_at=now,
            finished_at=now,
            started_by_id=operator.user.pk,
        )

    run = console_drill_run(run_id=stored.pk)
    assert (run.kind, run.status, run.passed, run.started_by) == (
        DrillRunKind.DRILL,
        DrillRunStatus.COMPLETE,
        True,
        operator.user,
    )
    last = operational_metrics()["last_drill"]
    assert (last["id"], last["passed"], last["protocol"]["stale_memory_escapes"]) == (
        stored.pk,
        True,
        0,
    )
    ContentType.objects.clear_cache()
    assert ContentType.objects.get_for_model(DrillRun).pk == content_type
