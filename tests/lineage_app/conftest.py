"""Signed-in browsers for lineage's own tests (the explorer's live in console/conftest.py)."""

from __future__ import annotations

from tests.reconcile_app.console.conftest import operator_browser  # noqa: F401 (a fixture)
