"""Gate `invariance`: histories that reduce to the same state must decide alike, and
duplicated or reordered delivery must fold alike; a reducer the gate cannot drive fails."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from reconcile_app.models import Contract
from reconcile_app.reconciliation import engine
from reconcile_app.reconciliation.types import FieldRead
from reconcile_app.reducers import REGISTRY, Reducer
from reconcile_app.reducers import base as reducer_base
from reconcile_app.reducers.hardship import HARDSHIP_V3
from tests.reconcile_app.release_gates.conftest import demo_contract, failed, gate

LETTER = "collections-letter"


def test_the_hardship_reducer_passes_with_pairs_of_histories(estate: None):
    result = gate(demo_contract(LETTER), "invariance")

    assert result.status == "passed", result.detail
    assert "48 seeded histories of hardship@3" in result.detail
    assert " 0 pairs" not in result.detail


def test_a_decision_that_depends_on_the_length_of_the_history_fails(
    estate: None, monkeypatch: pytest.MonkeyPatch
):
    # The regression: narrative residue, a long history (a high version) is held against
    # the account although the state it reduces to is the same.
    original = engine.decide

    def decide(contract: Any, binding: Any, reads: dict[str, FieldRead], *rest: Any) -> Any:
        decision = original(contract, binding, reads, *rest)
        if any((read.version or 0) > 3 for read in reads.values()):
            return {**decision, "result": "deny", "permitted_actions": []}
        return decision

    monkeypatch.setattr(engine, "decide", decide)

    failed(
        gate(demo_contract(LETTER), "invariance"),
        "Histories [",
        "both fold with hardship@3 to {'hardship_active':",
        "expected the same decision",
    )


def test_a_fold_that_counts_a_redelivered_event_twice_fails(
    estate: None, monkeypatch: pytest.MonkeyPatch
):
    # The regression: events lose their identity on the way in, so nothing dedupes them.
    original = reducer_base.fold

    def fold(reducer: Reducer, events: Any) -> Any:
        renamed = [replace(item, event_id=f"{item.event_id}/{n}") for n, item in enumerate(events)]
        return original(reducer, renamed)

    monkeypatch.setattr(reducer_base, "fold", fold)

    failed(gate(demo_contract(LETTER), "invariance"), "delivered twice folds with hardship@3")


def test_a_fold_in_delivery_order_fails(estate: None, monkeypatch: pytest.MonkeyPatch):
    # The regression: the ordering key is ignored and events apply as they arrive.
    original = reducer_base.fold

    def fold(reducer: Reducer, events: Any) -> Any:
        # Numbered by each id's first arrival, so a redelivery stays the same event (one id
        # with two contents is a conflict of its own, which is not this regression).
        events = list(events)
        arrival: dict[str, int] = {}
        for item in events:
            arrival.setdefault(item.event_id, len(arrival) + 1)
        arrived = [replace(item, seq=arrival[item.event_id]) for item in events]
        return original(reducer, arrived)

    monkeypatch.setattr(reducer_base, "fold", fold)

    failed(gate(demo_contract(LETTER), "invariance"), "delivered in reverse order folds")


LIVE_WITH_REDUCER = """
    decision_class: reducer-without-events
    version: "1"
    purpose: collections
    required:
      - {field: collections_status, source: case-service, max_age_seconds: 300}
    actions:
      release_collections_hold: {field: collections_status}
    policy:
      version: "p1"
      allow: [{when: 'true', permits: [release_collections_hold]}]
    reducer: "REDUCER"
"""


def test_an_unregistered_reducer_fails(
    contract_from: Callable[[str], Contract], monkeypatch: pytest.MonkeyPatch
):
    # Loading refuses a reducer that is not registered; one a later release of the code
    # dropped is still named by the contract loaded before.
    monkeypatch.setitem(REGISTRY, "ghost@1", replace(HARDSHIP_V3, name="ghost", version="1"))
    contract = contract_from(LIVE_WITH_REDUCER.replace("REDUCER", "ghost@1"))
    monkeypatch.delitem(REGISTRY, "ghost@1")

    failed(gate(contract, "invariance"), "Reducer ghost@1 is not registered.")


def test_a_reducer_that_declares_no_event_types_fails(
    contract_from: Callable[[str], Contract], monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setitem(
        REGISTRY, "quiet@1", replace(HARDSHIP_V3, name="quiet", version="1", event_types=())
    )
    contract = contract_from(LIVE_WITH_REDUCER.replace("REDUCER", "quiet@1"))

    failed(gate(contract, "invariance"), "Reducer quiet@1 declares no event types")
