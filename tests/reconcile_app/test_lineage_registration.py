"""Reconcile teaches lineage every kind of node it writes, once, at start-up."""

from __future__ import annotations

from lineage_app.registry import registry
from reconcile_app.lineage_registration import register_with_lineage
from reconcile_app.services.references import KINDS as REFERENCE_KINDS

WRITTEN = {"source", "read", "evidence", "reducer", "snapshot", "decision", "effect", "memory"}


def test_every_kind_reconcile_writes_is_registered():
    assert WRITTEN | set(REFERENCE_KINDS) <= set(registry.kinds)
    assert "memory_class" in registry.entry_points


def test_registering_again_changes_nothing():
    """ReconcileAppConfig.ready() may run twice; the second run is a no-op, not an error."""
    before = (dict(registry.kinds), dict(registry.entry_points), registry.explorer)
    register_with_lineage()
    assert (dict(registry.kinds), dict(registry.entry_points), registry.explorer) == before


def test_columns_follow_the_order_things_happen():
    order = sorted(WRITTEN, key=registry.kind_order)
    assert order == [
        "source",
        "read",
        "evidence",
        "reducer",
        "snapshot",
        "decision",
        "effect",
        "memory",
    ]
