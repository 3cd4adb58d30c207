"""An evidence append in flight while a decision is made, on PostgreSQL: replay as recorded
still reproduces the decision exactly.

`evidence_append` stamps the entry's `recorded_at` under the chain head's lock and commits a
moment later. A reconcile reading the ledger in that gap does not see the entry although its
own recorded-time cut-off is later; replay used to read by `recorded_at` alone, found the
entry, and answered `exact: false` for a decision nothing had changed. The snapshot now says
how far along the chain it read (`ledger_seq`, content schema 5) and replay reads no
further. The append is paused inside its transaction, in this thread, while another thread
reconciles, so the interleaving is forced, not hoped for (tests/races.py).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.utils.dateparse import parse_datetime

from reconcile_app.models import DecisionSnapshot, EvidenceEntry
from reconcile_app.services import evidence as evidence_module
from reconcile_app.services.evidence import evidence_append
from tests.conftest import ago
from tests.races import paused_race
from tests.reconcile_app.api.test_replay import replay
from tests.reconcile_app.effects.conftest import SUBJECT, collectible, reconcile  # noqa: F401
from tests.reconcile_app.services.old_schemas import issue_as_schema_2

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]


def _append_contradicting_observation() -> str:
    # Another source saying "hold" where the owner says "collect": were the decision to see
    # it, its content would carry a contradiction and the entry in the field's evidence.
    return evidence_append(
        kind="observation",
        subject=SUBJECT,
        field="collections_status",
        value="hold",
        source="hardship-desk",
        observed_at=ago(minutes=1),
        evidence_id="ev-in-flight",
    ).evidence_id


def _decided_during_an_append(agent, monkeypatch) -> dict[str, Any]:
    """What paused_race saw: the append (`write`) paused inside its transaction while the
    reconcile (`change`) decided."""
    return paused_race(
        monkeypatch,
        evidence_module,
        "evidence_support_note",
        _append_contradicting_observation,
        lambda: reconcile(agent),
    )


def test_a_decision_made_while_an_append_is_in_flight_replays_exactly(
    collectible, agent, monkeypatch
):
    seen = _decided_during_an_append(agent, monkeypatch)

    decided = seen["change"]
    assert isinstance(decided, dict), decided
    assert seen["write"] == "ev-in-flight"
    assert not seen["waited"]  # the reconcile read while the append was still open
    in_flight = EvidenceEntry.objects.get(evidence_id="ev-in-flight")
    cutoffs = decided["cutoffs"]
    # The race itself: stamped before the decision's cut-off, yet not what it saw.
    assert in_flight.recorded_at < parse_datetime(cutoffs["recorded_time"])
    assert "ev-in-flight" not in decided["fields"]["collections_status"]["evidence"]
    assert decided["contradictions"] == []
    assert decided["ledger_seq"] == in_flight.seq - 1

    as_recorded = replay(agent, decided["snapshot_id"], "as_recorded")
    assert as_recorded["exact"] is True, as_recorded["differences"]
    assert as_recorded["replayed_hash"] == as_recorded["original_hash"]


def test_one_issued_before_ledger_seq_was_kept_replays_exactly_to_the_last_entry_it_cites(
    collectible, agent, monkeypatch
):
    """The same race under content schema 2 (an upgraded installation's old rows): nothing
    says how far the decision read, so replay by the cut-off alone found the entry and
    answered inexact (and the release gate refused every new version of the contract while
    the snapshot was among the class's 20 latest). Read to the last entry the decision cites,
    it is exact, and the answer says where it read to."""
    issue_as_schema_2(monkeypatch)
    seen = _decided_during_an_append(agent, monkeypatch)
    monkeypatch.undo()
    decided = seen["change"]
    assert isinstance(decided, dict), decided
    assert decided["ledger_seq"] is None
    assert (
        DecisionSnapshot.objects.get(snapshot_id=decided["snapshot_id"]).content["schema_version"]
        == "2"
    )
    assert decided["contradictions"] == []
    cited = max(
        EvidenceEntry.objects.filter(
            evidence_id__in=decided["fields"]["collections_status"]["evidence"]
        ).values_list("seq", flat=True)
    )

    as_recorded = replay(agent, decided["snapshot_id"], "as_recorded")

    assert as_recorded["exact"] is True, as_recorded["differences"]
    assert as_recorded["inferred_ledger_seq"] == cited
    assert cited < EvidenceEntry.objects.get(evidence_id="ev-in-flight").seq
