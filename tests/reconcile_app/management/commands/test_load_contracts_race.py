"""Two deploys loading the same new contract version at once (PostgreSQL).

Each load asked whether the version was there, found it missing and inserted it: every load
but the first broke the (class, version) unique index, and load_contracts ended in a
traceback where one after the other says "unchanged". Activating (a deploy's default), a load
that found the version still a draft met the first load's activation running (or finished)
and reported its gates failed, the version "left as a draft": a failed deploy, while the
version went live."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connection

from reconcile_app.choices import ContractStatus
from reconcile_app.models import Contract
from reconcile_app.services.contracts import contracts_load
from tests.conftest import ESTATE
from tests.races import all_at_once

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]

LOADS = 6


def loads_at_once(tmp_path: Path, *, activate: bool) -> list[str]:
    """LOADS loads of warehouse-pick@1.9 released together: what each said of it."""
    text = (ESTATE / "warehouse-pick.yaml").read_text()
    path = tmp_path / "warehouse-pick.yaml"
    path.write_text(text.replace('version: "1.0"', 'version: "1.9"'))

    def load() -> str:
        report = contracts_load(paths=[str(path)], activate=activate)
        said = "created" if report.contracts_created else "unchanged"
        refused = [activation.detail for activation in report.refused]
        return f"{said}, refused {refused}" if refused else said

    return all_at_once(load, runs=LOADS)


def test_loads_at_once_of_one_new_version_store_it_once_and_each_succeed(estate, tmp_path):
    seen = loads_at_once(tmp_path, activate=False)

    assert seen == ["created"] + ["unchanged"] * (LOADS - 1), seen
    assert Contract.objects.filter(decision_class="warehouse-pick", version="1.9").count() == 1


def test_loads_at_once_that_activate_one_new_version_each_succeed(estate, tmp_path):
    seen = loads_at_once(tmp_path, activate=True)

    assert seen == ["created"] + ["unchanged"] * (LOADS - 1), seen
    version = Contract.objects.get(decision_class="warehouse-pick", version="1.9")
    assert version.status == ContractStatus.ACTIVE
