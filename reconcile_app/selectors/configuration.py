"""What the gate reads on every request and almost nothing changes — a principal's
capabilities, the sources — served from epoch-validated in-process copies while a request
pins the epochs (reconcile_app/epochs.py), read from the database otherwise."""

from __future__ import annotations

from collections.abc import Iterable

from reconcile_app.epochs import EpochCache
from reconcile_app.errors import NotFound
from reconcile_app.models import Principal, Source

_CAPABLE_ACTIONS: EpochCache[frozenset[str]] = EpochCache("configuration")
_SOURCES: EpochCache[dict[str, Source]] = EpochCache("configuration")


def capable_actions(principal: Principal, decision_class: str) -> frozenset[str]:
    """The actions the principal may take in the decision class. A `*` granted before
    wildcards were refused grants nothing (remove it: `agent_access revoke-capability`)."""
    return _CAPABLE_ACTIONS.get(
        (principal.pk, decision_class),
        lambda: frozenset(
            principal.capabilities.filter(decision_class=decision_class)
            .exclude(action="*")
            .values_list("action", flat=True)
        ),
    )


def sources_named(names: Iterable[str]) -> dict[str, Source]:
    """The sources of these names that exist, by name."""
    every = _SOURCES.get("all", lambda: {source.name: source for source in Source.objects.all()})
    return {name: every[name] for name in names if name in every}


def source_named(name: str) -> Source:
    found = sources_named([name])
    if name not in found:
        raise NotFound(f"no source {name}", code="source_not_found")
    return found[name]
