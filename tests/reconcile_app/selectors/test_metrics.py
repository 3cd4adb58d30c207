"""The last drill in the operational figures comes from whichever app registered a reader
(drills_app does, in its AppConfig.ready); reconcile_app does not import the drills."""

from __future__ import annotations

from typing import Any

import pytest

from drills_app.selectors import drill_last_summary
from reconcile_app.selectors import metrics


@pytest.fixture
def no_reader(monkeypatch) -> None:
    monkeypatch.setattr(metrics, "_last_drill_readers", [])


def test_the_drills_app_registers_its_reader():
    assert metrics._last_drill_readers == [drill_last_summary]


def test_without_a_reader_there_is_no_last_drill(db, no_reader):
    assert metrics.operational_metrics()["last_drill"] is None


def test_a_registered_reader_is_reported_as_it_answers(db, no_reader):
    summary: dict[str, Any] = {"id": 7, "passed": True, "finished_at": None, "protocol": {}}
    metrics.last_drill_reader_register(lambda: summary)
    metrics.last_drill_reader_register(lambda: summary)  # once more replaces, never adds
    assert len(metrics._last_drill_readers) == 1
    assert metrics.operational_metrics()["last_drill"] == summary
