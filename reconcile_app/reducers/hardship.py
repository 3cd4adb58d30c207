"""The seed's hardship reducer (seed 002): approvals open an interval, revocations close it,
missed payments count without cancelling the arrangement; collections eligibility is derived
and keeps its inputs.
"""

from __future__ import annotations

from typing import Any

from reconcile_app.reducers.base import Event, Reducer, register


def _initial() -> dict[str, Any]:
    return {"hardship_active": False, "hardship_since": None, "missed_payments": 0}


def _apply(state: dict[str, Any], event: Event) -> None:
    if event.type == "HardshipApproved":
        state["hardship_active"] = True
        state["hardship_since"] = event.valid_from.isoformat()
    elif event.type == "HardshipRevoked":
        state["hardship_active"] = False
        state["hardship_since"] = None
    elif event.type == "PaymentMissed":
        state["missed_payments"] += 1
    elif event.type == "ArrearsCleared":
        state["missed_payments"] = 0
    # Other event types belong to other reducers of the same stream: ignored by contract.


def _derive(state: dict[str, Any]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    eligible = (not state["hardship_active"]) and state["missed_payments"] > 0
    return (
        {
            "hardship_active": state["hardship_active"],
            "missed_payments": state["missed_payments"],
            "collections_eligible": eligible,
        },
        {
            "collections_eligible": {
                "hardship_active": state["hardship_active"],
                "hardship_since": state["hardship_since"],
                "missed_payments": state["missed_payments"],
                "rule": "not hardship_active and missed_payments > 0",
            }
        },
    )


HARDSHIP_V3 = register(
    Reducer(
        name="hardship",
        version="3",
        fields=("hardship_active", "missed_payments", "collections_eligible"),
        ordering_key="seq",
        apply=_apply,
        initial=_initial,
        derive=_derive,
        event_types=("HardshipApproved", "HardshipRevoked", "PaymentMissed", "ArrearsCleared"),
    )
)
