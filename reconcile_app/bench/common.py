"""See reconcile_app/bench/__init__.py: forwards lineage_app.bench's imports, then goes."""

from __future__ import annotations

from drills_app.bench.common import percentiles, timed

__all__ = ["percentiles", "timed"]
