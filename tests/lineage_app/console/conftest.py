"""Explorer fixtures: the host's lineage chain (tests/reconcile_app/lineage_chain.py) and
signed-in browsers. lineage_app is exercised here as reconcile mounts and registers it."""

from __future__ import annotations

from tests.reconcile_app.console.conftest import (  # noqa: F401 (fixtures)
    auditor_browser,
    operator_browser,
    reviewer_browser,
    signed_in,
)
from tests.reconcile_app.lineage_chain import (  # noqa: F401 (fixtures)
    chain,
    collectible,
    correction,
)
