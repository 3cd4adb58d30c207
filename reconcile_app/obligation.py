"""Seed 002's reconstruction obligation test, as a pure function of a contract's assessment.

Four threshold questions, asked in order (mutability, authority, consequence, replay); "one
hard trigger outweighs three comfortable answers". A hard trigger — consequence and mutability
both high, contested authority, or replay required — or no assessment at all makes the level
`reconstruct`: every release gate must pass before the version goes live. Otherwise
`narrative_ok`: accumulated context may serve between checkpoints, and only the gates that
keep the gate itself safe are required (services/release_gates).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reconcile_app.choices import ObligationLevel

# The order is the seed's: each question is asked only after the one before it.
OBLIGATION_VALUES: dict[str, tuple[str, ...]] = {
    "mutability": ("low", "high"),
    "authority": ("single", "contested"),
    "consequence": ("low", "high"),
    "replay": ("none", "required"),
}


def obligation_triggers(obligation: Mapping[str, Any] | None) -> list[str]:
    """The hard triggers an assessment pulls, in plain words (empty: none)."""
    if not obligation:
        return ["no obligation assessment: the strict default applies"]
    triggers = []
    if obligation.get("mutability") == "high" and obligation.get("consequence") == "high":
        triggers.append("consequence and mutability are both high")
    if obligation.get("authority") == "contested":
        triggers.append("authority is contested")
    if obligation.get("replay") == "required":
        triggers.append("replay is required")
    return triggers


def obligation_level(obligation: Mapping[str, Any] | None) -> str:
    """`reconstruct` on any hard trigger or a missing assessment, else `narrative_ok`."""
    if obligation_triggers(obligation):
        return ObligationLevel.RECONSTRUCT.value
    return ObligationLevel.NARRATIVE_OK.value
