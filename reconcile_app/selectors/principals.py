"""Who is asking: the caller's principal, role, capabilities and what they may reconcile."""

from __future__ import annotations

from typing import Any

from reconcile_app.choices import ContractStatus
from reconcile_app.models import Contract, Principal
from reconcile_app.roles import roles_of
from reconcile_app.selectors.capabilities import ATTEST, FACT


def principal_profile(principal: Principal) -> dict[str, Any]:
    """`GET /api/v1/me`: two queries beyond the principal (capabilities, active contracts)."""
    capabilities = sorted(
        principal.capabilities.values_list("decision_class", "action"), key=lambda pair: pair
    )
    decision = [(kind, name) for kind, name in capabilities if kind not in (ATTEST, FACT)]
    actions: dict[str, list[str]] = {}
    for decision_class, action in decision:
        actions.setdefault(decision_class, []).append(action)
    active = dict(
        Contract.objects.filter(
            decision_class__in=actions, status=ContractStatus.ACTIVE
        ).values_list("decision_class", "version")
    )
    return {
        "name": principal.name,
        "kind": principal.kind,
        "roles": sorted(str(role) for role in roles_of(principal.user)),
        "capabilities": [f"{kind}:{name}" for kind, name in capabilities],
        "attests": [name for kind, name in capabilities if kind == ATTEST],
        "fact_patterns": [name for kind, name in capabilities if kind == FACT],
        "decision_classes": [
            {"decision_class": name, "active_version": active[name], "actions": sorted(found)}
            for name, found in sorted(actions.items())
            if name in active
        ],
    }
