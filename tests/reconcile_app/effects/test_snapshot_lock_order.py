"""An escalating snapshot is written by the ORM inside a transaction that holds both epochs
FOR SHARE from its start (services/quarantine.epoch_check) and then inserts the snapshot,
whose foreign key checks its contract's row (FOR KEY SHARE). A version going live locks
every version of its class, then moves the configuration epoch (a trigger on contracts): it
must not hold the contract's row in a mode that foreign-key check waits on, or each waits
on the other (PostgreSQL: deadlock detected, the reconcile or the activation broken).

The activation (in another thread) pauses once it holds the class's versions, until the
reconcile (in this thread) holds the epochs: the interleaving is forced, not hoped for."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db import connection, connections

from reconcile_app.models import Contract, DecisionSnapshot
from reconcile_app.services import snapshots as snapshots_module
from reconcile_app.services.contract_lifecycle import contract_activate_now
from tests.conftest import COLLECTIONS
from tests.factories import load_yaml
from tests.reconcile_app.effects.test_escalation_approval import complaint_open  # noqa: F401
from tests.reconcile_app.effects.test_gate import TIGHTENED

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]


def test_a_version_going_live_while_an_escalating_snapshot_is_written_deadlocks_nothing(
    complaint_open,
    agent,
    tmp_path,
    monkeypatch,
):
    load_yaml(tmp_path, {"tightened.yaml": TIGHTENED})
    # load_yaml activates: make 7.4 a draft again, and 7.3 the version the snapshot is under.
    Contract.objects.filter(decision_class=COLLECTIONS, version="7.4").update(status="draft")
    Contract.objects.filter(decision_class=COLLECTIONS, version="7.3").update(status="active")
    draft = Contract.objects.get(decision_class=COLLECTIONS, version="7.4")
    locked, held = threading.Event(), threading.Event()
    real_check, real_save = snapshots_module.epoch_check, Contract.save
    seen: dict[str, Any] = {}

    def held_after_the_versions_are_locked(expected: int) -> bool:
        seen["locked"] = locked.wait(timeout=60)
        result = real_check(expected)
        held.set()
        return result

    def save_once_the_epochs_are_held(self: Contract, *args: Any, **kwargs: Any) -> None:
        # _go_live retiring 7.3: the class's versions are locked by now.
        if self.status == "retired" and not locked.is_set():
            locked.set()
            held.wait(timeout=30)
            time.sleep(0.3)  # the snapshot's insert is waiting on the contract's row
        real_save(self, *args, **kwargs)

    monkeypatch.setattr(snapshots_module, "epoch_check", held_after_the_versions_are_locked)
    monkeypatch.setattr(Contract, "save", save_once_the_epochs_are_held)

    def rival() -> None:
        try:
            seen["activation"] = contract_activate_now(contract=draft, rationale="race").status
        except BaseException as exc:  # anything else is the finding
            seen["activation"] = f"{type(exc).__name__}: {exc}"
        finally:
            connections.close_all()

    thread = threading.Thread(target=rival)
    thread.start()
    try:
        response = agent.post(
            "/api/v1/reconcile",
            {
                "subject": "account-17",
                "purpose": "collections",
                "decision_class": COLLECTIONS,
                "proposed_action": "retain_manual_review",
            },
        )
    finally:
        thread.join(timeout=60)
    assert (response.status_code, seen["activation"], seen["locked"]) == (201, "activated", True), (
        response.content,
        seen,
    )
    assert response.json()["decision"]["result"] == "escalate"
    assert DecisionSnapshot.objects.filter(snapshot_id=response.json()["snapshot_id"]).exists()
