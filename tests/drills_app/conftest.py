"""Drills page fixtures: the console's signed-in browsers."""

from __future__ import annotations

from tests.reconcile_app.console.conftest import operator_browser  # noqa: F401 (a fixture)
