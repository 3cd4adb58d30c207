"""The simulation's lines of work: which demo agent works which demo contract, on which
owner's field, with which values, and who may contradict the owner."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Desk:
    """One demo agent's line of work on one demo contract."""

    agent: str
    decision_class: str
    purpose: str
    prefix: str
    source: str
    field: str
    ledger: str  # who records observations of the field
    values: tuple[str, ...]
    # Other fields the owner holds for every subject: (source, field, value).
    extras: tuple[tuple[str, str, str], ...] = ()
    witness: str = "contact-centre"  # a second source that may contradict the owner

    def action_for(self, believed: Any) -> tuple[str, Any]:
        """What the agent proposes, from what it believes (dispatch confirms the address it
        remembers: when that is outdated, policy denies it)."""
        if self.decision_class == "collections-contact-release":
            if believed == "collect":
                return "retain_manual_review", "manual_review"
            return "release_collections_hold", "collect"
        if self.decision_class == "warehouse-pick":
            return "pick_pallet", "picked"
        return "dispatch_card", believed


DESKS = (
    Desk(
        agent="sim-collections-agent",
        decision_class="collections-contact-release",
        purpose="collections",
        prefix="acct",
        source="case-service",
        field="collections_status",
        ledger="case-ledger",
        values=("collect", "hold", "manual_review"),
        extras=(("complaints-service", "complaint_status", "none"),),
    ),
    Desk(
        agent="sim-warehouse-agent",
        decision_class="warehouse-pick",
        purpose="fulfilment",
        prefix="pallet",
        source="warehouse-service",
        field="pallet_bay",
        ledger="warehouse-event-ledger",
        values=tuple(f"bay {n}" for n in range(1, 13)),
        witness="warehouse-scanner",
    ),
    Desk(
        agent="sim-dispatch-agent",
        decision_class="dispatch-card",
        purpose="card-dispatch",
        prefix="cust",
        source="customer-master",
        field="delivery_address",
        ledger="customer-master",
        values=("A", "B", "C", "D", "E"),
        extras=(("customer-master", "address_verification", "verified"),),
        witness="courier-feedback",
    ),
)
