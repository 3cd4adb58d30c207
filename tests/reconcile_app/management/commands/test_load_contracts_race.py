"""Two deploys loading the same new contract version at once (PostgreSQL).

Each load asked whether the version was there, found it missing and inserted it: every load
but the first broke the (class, version) unique index, and load_contracts ended in a
traceback where one after the other says "unchanged"."""

from __future__ import annotations

import pytest
from django.db import connection

from reconcile_app.models import Contract
from reconcile_app.services.contracts import contracts_load
from tests.conftest import ESTATE
from tests.races import all_at_once

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]

LOADS = 6


def test_loads_at_once_of_one_new_version_store_it_once_and_each_succeed(estate, tmp_path):
    text = (ESTATE / "warehouse-pick.yaml").read_text()
    path = tmp_path / "warehouse-pick.yaml"
    path.write_text(text.replace('version: "1.0"', 'version: "1.9"'))

    def load() -> str:
        report = contracts_load(paths=[str(path)], activate=False)
        return "created" if report.contracts_created else "unchanged"

    seen = all_at_once(load, runs=LOADS)

    assert seen == ["created"] + ["unchanged"] * (LOADS - 1), seen
    assert Contract.objects.filter(decision_class="warehouse-pick", version="1.9").count() == 1
