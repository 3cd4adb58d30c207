"""Who is asking: the caller's principal, role, capabilities and what they may reconcile."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.cache import cache
from django.utils.dateparse import parse_datetime

from reconcile_app.choices import ContractStatus
from reconcile_app.models import ApiKey, Contract, Principal
from reconcile_app.roles import roles_of
from reconcile_app.selectors.capabilities import ATTEST, FACT
from reconcile_app.services.key_use import LAST_USE_CACHE_PREFIX


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


@dataclass(frozen=True)
class TokenRow:
    prefix: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


def tokens_of(*, user: Any) -> list[TokenRow]:
    """The person's own API tokens, newest first: one query and one cache read. Last use is
    the later of the stored time and the one noted in the cache (services/key_use.py)."""
    keys = list(ApiKey.objects.filter(principal__user=user).order_by("-created_at", "-id"))
    noted = cache.get_many([f"{LAST_USE_CACHE_PREFIX}{key.prefix}" for key in keys])
    rows = []
    for key in keys:
        text = noted.get(f"{LAST_USE_CACHE_PREFIX}{key.prefix}")
        cached = parse_datetime(text) if isinstance(text, str) else None
        times = [moment for moment in (key.last_used_at, cached) if moment is not None]
        rows.append(
            TokenRow(
                prefix=key.prefix,
                created_at=key.created_at,
                last_used_at=max(times) if times else None,
                revoked_at=key.revoked_at,
            )
        )
    return rows
