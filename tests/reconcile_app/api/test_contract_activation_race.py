"""Two activations of one class finishing at once leave exactly one version active: the
class's versions are locked while one goes live, so they happen one after the other."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections

from reconcile_app.models import AuditEvent, Contract, ContractActivation
from reconcile_app.services.contract_lifecycle import contract_activate_now
from tests.conftest import COLLECTIONS
from tests.factories import load_yaml
from tests.reconcile_app.effects.test_gate import DENY_COLLECT, TIGHTENED

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="real row-lock concurrency needs PostgreSQL"
)


@pytest.mark.django_db(transaction=True)
def test_concurrent_activations_of_two_versions_leave_exactly_one_active(estate, tmp_path):
    for name, text in {"a.yaml": TIGHTENED, "b.yaml": DENY_COLLECT}.items():
        load_yaml(tmp_path, {name: text})
    drafts = list(Contract.objects.filter(decision_class=COLLECTIONS, version__in=["7.4", "7.5"]))
    # load_yaml activates; make both drafts again to race them from the same start.
    Contract.objects.filter(pk__in=[item.pk for item in drafts]).update(status="draft")
    Contract.objects.filter(decision_class=COLLECTIONS, version="7.3").update(status="active")
    barrier = threading.Barrier(len(drafts))
    outcomes: list[str] = []
    lock = threading.Lock()

    def go(contract: Contract) -> None:
        try:
            barrier.wait()
            result = contract_activate_now(contract=contract, rationale="race").status
        finally:
            connections.close_all()
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=go, args=(item,)) for item in drafts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert outcomes == ["activated", "activated"]
    statuses = dict(
        Contract.objects.filter(decision_class=COLLECTIONS).values_list("version", "status")
    )
    assert sorted(statuses.values()) == ["active", "retired", "retired"]
    # One after the other: the second replaced the first, which had replaced 7.3.
    replaced = sorted(
        ContractActivation.objects.filter(rationale="race").values_list(
            "replaced_version", flat=True
        )
    )
    winner = next(version for version, state in statuses.items() if state == "active")
    loser = ({"7.4", "7.5"} - {winner}).pop()
    assert replaced == sorted(["7.3", loser])
    assert AuditEvent.objects.filter(action="contract.retire", reason="race").count() == 2
