"""`manage.py run_demo`: seed 000's demo through the client against a live server prints the
seed's five lines exactly, run after run (each run a fresh account, its own key)."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command

from drills_app.seed_demo import AGENT_NAME, DECISION_CLASS, SOURCE
from reconcile_app.models import ApiKey, ContractActivation
from sandbox_app.models import SandboxRecord

SEED_LINES = [
    "positive: confirmed, authorise=True",
    "negative_stale_memory: superseded, authorise=False",
    "negative_concurrent_update: rejected (state version changed: expected 42, found 43)",
    "idempotent_retry: same_receipt=True, resulting_version=44",
    "postcondition: manual_review, verified=True",
]


@pytest.mark.django_db(transaction=True)
def test_run_demo_prints_the_seeds_five_lines_every_run(live_server: Any, eager_tasks: Any) -> None:
    for _ in range(2):
        out = StringIO()
        call_command("run_demo", url=live_server.url, wait=5, stdout=out)
        assert out.getvalue().splitlines() == SEED_LINES

    # Its contract went live once, through its release gates (all seven at `reconstruct`;
    # invariance is not required of a contract without a reducer).
    activation = ContractActivation.objects.get(contract__decision_class=DECISION_CLASS)
    assert (activation.status, activation.level) == ("activated", "reconstruct")
    gates = {gate["name"]: gate["status"] for gate in activation.gates}
    assert gates == {name: "passed" for name in gates} | {"invariance": "not_required"}
    assert len(gates) == 7
    # Two runs, two accounts, each moved 42 → 43 (out of band) → 44 (the demo's commit).
    accounts = SandboxRecord.objects.filter(source=SOURCE, field="collections_status")
    assert sorted(accounts.values_list("version", flat=True)) == [44, 44]
    assert set(accounts.values_list("value", flat=True)) == {"manual_review"}
    # No run leaves a usable key behind.
    assert not ApiKey.objects.filter(principal__name=AGENT_NAME, revoked_at__isnull=True).exists()
