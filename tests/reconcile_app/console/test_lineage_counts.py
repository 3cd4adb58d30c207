"""The explorer's up and down counts are the lineage the API walks: derivation, not
invalidation. What replaced a node is still drawn, beside the counts, not in them."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from lineage_app.selectors.graph import REPLACEMENT
from tests.reconcile_app.effects.conftest import case_ledger_says_collect, reconcile
from tests.reconcile_app.lineage_chain import collectible  # noqa: F401 (a fixture)


def test_what_was_decided_on_a_superseding_entry_is_not_counted_downstream_of_the_old_one(
    collectible, agent, auditor, auditor_browser
):
    used_old = reconcile(agent)
    newer = case_ledger_says_collect(timezone.now() - timedelta(minutes=5), supersedes="ev-collect")
    used_new = reconcile(agent)

    response = auditor_browser.get("/lineage/?node=evidence:ev-collect&depth=6")
    below = auditor.get("/api/v1/lineage/evidence:ev-collect/descendants").json()

    graph = response.context["graph"]
    assert graph.counts["downstream"] == below["counts"]
    assert graph.total == below["total"]
    sides = {node.ref: node.side for node in graph.nodes}
    assert sides[used_old["snapshot_id"]] == "downstream"
    # The entry that superseded it is drawn (the page says what replaced it) and not counted;
    # the decision made on that entry is neither.
    assert sides[newer.evidence_id] == REPLACEMENT
    assert used_new["snapshot_id"] not in sides
    assert graph.not_drawn == 0
