"""The snapshot detail page shows everything the decision was made on."""

from __future__ import annotations

import pytest

from tests.reconcile_app.api.test_recall import recalled, remember
from tests.reconcile_app.effects.conftest import collectible  # noqa: F401
from tests.reconcile_app.lineage_chain import chain, correction  # noqa: F401 (fixtures)
from tests.reconcile_app.reducers.test_hardship import (  # noqa: F401 (fixtures)
    ledger,
    letters_agent,
)
from tests.reconcile_app.reducers.test_hardship import reconcile as reconcile_letter

# session, user, the user's groups, the snapshot, its contradiction rows, its taints, its
# audit timeline.
DETAIL_QUERIES = 7


def test_detail_shows_binding_versions_and_cutoffs(operator_browser, make_snapshot):
    snapshot = make_snapshot(claimed="collect")
    page = operator_browser.get(f"/snapshots/{snapshot.snapshot_id}/").content.decode()
    assert snapshot.snapshot_id in page
    for text in (
        "collections-agent",
        "account-17",
        "collections",
        "release_collections_hold",
        "v7.3",
        "collections-2026-08",
        "Valid time",
        "Recorded time",
        snapshot.content["contract"]["content_hash"][:16],
    ):
        assert text in page, text
    assert '<span class="badge badge-red">deny</span>' in page
    assert '<span class="badge badge-amber">degraded</span>' in page
    assert "hardship_hold" in page


def test_detail_shows_each_field_read_with_freshness(operator_browser, make_snapshot):
    snapshot = make_snapshot()
    page = operator_browser.get(f"/snapshots/{snapshot.snapshot_id}/").content.decode()
    read = snapshot.content["fields"]["collections_status"]
    assert "collections_status" in page and "complaint_status" in page
    assert '<td class="num mono">42</td>' in page
    assert "case-service" in page and "linearizable" in page
    assert '<span class="badge badge-green">fresh</span>' in page
    assert "of 5m 00s" in page  # against the contract's max age for the field
    assert '<span class="badge badge-red" title="complaints-service has no record' in page
    for evidence_id in read["evidence"]:
        assert evidence_id in page


def test_detail_says_which_fields_are_event_sourced(
    operator_browser, make_snapshot, ledger, letters_agent
):
    ledger("acct-1", "PaymentMissed")
    folded = reconcile_letter(letters_agent, "acct-1")["snapshot_id"]
    live = make_snapshot().snapshot_id

    note = '<div class="cell-note">event-sourced</div>'
    page = operator_browser.get(f"/snapshots/{folded}/").content.decode()
    assert page.count(note) == 3  # the hardship ledger's three fields
    assert note not in operator_browser.get(f"/snapshots/{live}/").content.decode()


def test_detail_shows_evidence_manifest_with_hash_prefix(operator_browser, make_snapshot):
    snapshot = make_snapshot()
    page = operator_browser.get(f"/snapshots/{snapshot.snapshot_id}/").content.decode()
    for entry in snapshot.content["evidence_manifest"]:
        assert entry["evidence_id"] in page
        assert f'title="{entry["hash"]}">{entry["hash"][:16]}…' in page


def test_detail_shows_claim_verdicts_and_contradictions(operator_browser, make_snapshot):
    snapshot = make_snapshot(claimed="collect")
    page = operator_browser.get(f"/snapshots/{snapshot.snapshot_id}/").content.decode()
    assert '<span class="badge badge-red">contradicted</span>' in page
    assert "fresh state disagrees with memory" in page
    assert "Account remains collectible." in page
    # Both sides of the contradiction, with both sources, and its status.
    assert "memory:episodic" in page and "case-service@42" in page
    assert '<span class="value">hold</span>' in page
    assert '<span class="value">collect</span>' in page
    assert '<span class="badge badge-amber">open</span>' in page


def test_unknown_snapshot_is_404(operator_browser, estate):
    assert operator_browser.get("/snapshots/snap_nothing/").status_code == 404


@pytest.mark.parametrize("claims", [0, 1])
def test_detail_query_count_is_fixed(
    operator_browser, make_snapshot, django_assert_num_queries, claims
):
    snapshot = make_snapshot(claimed="collect" if claims else None)
    with django_assert_num_queries(DETAIL_QUERIES):
        response = operator_browser.get(f"/snapshots/{snapshot.snapshot_id}/")
    assert response.status_code == 200


def test_a_recalled_claim_links_its_memory_record(operator_browser, collectible, agent):
    memory = remember(agent)
    snapshot = recalled(agent, {"memory_id": memory["memory_id"]})
    page = operator_browser.get(f"/snapshots/{snapshot['snapshot_id']}/").content.decode()
    assert (
        f'href="/lineage/?node=memory:{memory["memory_id"]}" data-memory="{memory["memory_id"]}"'
        in page
    )


def test_a_tainted_snapshot_says_so_up_front(chain, correction, auditor_browser):
    page = auditor_browser.get(f"/snapshots/{chain.snapshot_id}/").content.decode()
    banner = page[page.index('id="tainted-banner"') :][:900]
    assert f'href="/corrections/{correction.correction_id}/"' in banner and "ev-collect" in banner
    assert "snapshot_tainted" in banner


def test_an_untainted_snapshot_shows_no_banner(operator_browser, make_snapshot):
    snapshot = make_snapshot(claimed="collect")
    page = operator_browser.get(f"/snapshots/{snapshot.snapshot_id}/").content.decode()
    assert 'id="tainted-banner"' not in page
