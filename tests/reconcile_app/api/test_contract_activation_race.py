"""Two activations of one class finishing at once leave exactly one version active: the
class's versions are locked while one goes live, so they happen one after the other, and the
second does not retire the release the first made after it was asked for."""

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

    # Both were asked for before either went live: the first to finish goes live, the second
    # finds a release newer than its request and leaves it in place (nobody chose to retire
    # it), saying so on its activation.
    assert sorted(outcomes) == ["activated", "failed"]
    statuses = dict(
        Contract.objects.filter(decision_class=COLLECTIONS).values_list("version", "status")
    )
    assert sorted(statuses.values()) == ["active", "draft", "retired"]
    winner = next(version for version, state in statuses.items() if state == "active")
    loser = ({"7.4", "7.5"} - {winner}).pop()
    assert statuses[loser] == "draft"
    refused = ContractActivation.objects.get(rationale="race", status="failed")
    assert f"@{winner} went live after this activation was requested" in refused.detail
    assert ContractActivation.objects.get(
        rationale="race", status="activated"
    ).replaced_version == ("7.3")
    assert AuditEvent.objects.filter(action="contract.retire", reason="race").count() == 1
