"""Versioned, deterministic reducers that fold an owner's events into fields.

A reducer is named `name@version` and never changes once shipped: a fix is a new version,
so every snapshot can say which version built it and lineage can find all of a bad one's
output. Folding dedupes by event id, orders by the reducer's declared key, and turns events
that cannot be ordered into a `conflict` rather than letting the last write win.
"""

from __future__ import annotations

from reconcile_app.reducers.base import REGISTRY, Event, Folded, Reducer, fold, register

# Imported for its registration: the shipped reducers join REGISTRY when the package loads.
from reconcile_app.reducers.hardship import HARDSHIP_V3

__all__ = [
    "HARDSHIP_V3",
    "REGISTRY",
    "Event",
    "Folded",
    "Reducer",
    "fold",
    "reducer_named",
    "register",
]


def reducer_named(label: str) -> Reducer | None:
    return REGISTRY.get(label)
