"""A PROV export of a node holds its lineage: ancestors and descendants by derivation, plus the
entries that invalidated (or were invalidated by) them, so the document says what replaced
what. What was built on the replacement is not the node's lineage and stays out."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from tests.reconcile_app.effects.conftest import case_ledger_says_collect, reconcile
from tests.reconcile_app.lineage_chain import collectible  # noqa: F401 (a fixture)


def element_ids(document: dict) -> set[str]:
    return {
        identifier
        for section in ("entity", "activity", "agent")
        for identifier in document.get(section, {})
    }


def test_export_of_a_superseded_entry_leaves_out_what_was_decided_on_its_successor(
    collectible, agent, operator
):
    used_old = reconcile(agent)
    newer = case_ledger_says_collect(timezone.now() - timedelta(minutes=5), supersedes="ev-collect")
    used_new = reconcile(agent)
    assert [entry["evidence_id"] for entry in used_new["evidence_manifest"]] == [newer.evidence_id]

    document = operator.get("/api/v1/lineage/evidence:ev-collect/prov?format=json").json()
    below = operator.get("/api/v1/lineage/evidence:ev-collect/descendants").json()

    ids = element_ids(document)
    assert f"rc:snapshot_{used_old['snapshot_id']}" in ids
    # The successor is named, so the document says what invalidated the entry ...
    assert f"rc:evidence_{newer.evidence_id}" in ids
    assert "wasInvalidatedBy" in document
    # ... but what was decided on the successor is neither upstream nor downstream of it.
    assert used_new["snapshot_id"] not in {node["ref"] for node in below["nodes"]}
    assert f"rc:snapshot_{used_new['snapshot_id']}" not in ids
    assert f"rc:decision_{used_new['snapshot_id'].replace('snap_', 'dec_')}" not in ids


def test_export_of_a_decision_on_the_successor_names_the_entry_it_replaced_and_no_more(
    collectible, agent, operator
):
    used_old = reconcile(agent)
    newer = case_ledger_says_collect(timezone.now() - timedelta(minutes=5), supersedes="ev-collect")
    used_new = reconcile(agent)

    document = operator.get(f"/api/v1/lineage/snapshot:{used_new['snapshot_id']}/prov").json()

    ids = element_ids(document)
    assert {f"rc:evidence_{newer.evidence_id}", "rc:evidence_ev-collect"} <= ids
    # The replaced entry's own lineage (the decision made on it) is not this decision's.
    assert f"rc:snapshot_{used_old['snapshot_id']}" not in ids
