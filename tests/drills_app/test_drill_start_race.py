"""Drills run one at a time, also when two operators start one at the same moment, on
PostgreSQL: two concurrent drills on the drill's sandbox sources clear each other's injected
faults, and one reported escapes the protocol never let through (seen on a live server: two
console starts a few milliseconds apart both ran, one "failing" with a stale-memory escape)."""

from __future__ import annotations

import pytest
from django.db import connection

from drills_app.choices import DrillRunKind, DrillRunStatus
from drills_app.models import DrillRun
from drills_app.runs import drill_run_start
from tests.races import paused_race

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]


def test_a_drill_started_while_another_start_commits_is_refused(monkeypatch):
    def start() -> DrillRun:
        return drill_run_start(kind=DrillRunKind.DRILL, parameters={"repeat": 1})

    # The first start pauses after inserting its run, before committing; the second comes.
    seen = paused_race(monkeypatch, DrillRun.objects, "create", start, start)

    assert isinstance(seen["write"], DrillRun)
    assert "drills run one at a time" in str(seen["change"])
    assert DrillRun.objects.filter(status=DrillRunStatus.RUNNING).count() == 1
