"""Snapshots issued as older code wrote them: the rows an upgraded installation keeps."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_app.reconciliation import engine
from reconcile_app.reconciliation.types import Outcome
from reconcile_app.services import owner_reads, reconcile


def issue_as_schema_2(monkeypatch: pytest.MonkeyPatch, *, fold_every_event: bool = False) -> None:
    """Content schema 2 (e.g. f6ba2b6's rows): reads without their mode and no `ledger_seq`;
    with `fold_every_event`, also its fold, which took every event recorded by the read, even
    one valid only later (content schema 4 bounded it). `monkeypatch.undo()` ends it."""
    evaluate = engine.evaluate

    def evaluate_as_schema_2(**kwargs: Any) -> Outcome:
        return evaluate(**{**kwargs, "schema_version": "2", "ledger_seq": None})

    monkeypatch.setattr(reconcile.engine, "evaluate", evaluate_as_schema_2)
    if fold_every_event:
        monkeypatch.setattr(owner_reads, "fold_bound", lambda read_at, observed_at: None)
