"""create_principal and create_user run twice at once for one name (PostgreSQL).

Each asked whether the name was free, then created the account: every run but the first broke
the username's unique index, a traceback where one after the other says the name is taken."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import connection

from reconcile_app.models import Principal
from reconcile_app.services.principals import principal_create, user_create
from tests.races import all_at_once

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]

RUNS = 6


@pytest.mark.parametrize(
    "create",
    [
        lambda: principal_create(name="picker", capabilities=["warehouse-pick:pick_pallet"]),
        lambda: user_create(username="picker", roles=["operator"]),
    ],
    ids=["create_principal", "create_user"],
)
def test_one_name_created_at_once_is_created_once_and_refused_as_taken(create):
    def created() -> str:
        create()
        return "created"

    seen = all_at_once(created, runs=RUNS)

    assert seen == ["created"] + ["name_taken"] * (RUNS - 1), seen
    assert User.objects.filter(username="picker").count() == 1
    assert Principal.objects.filter(name="picker").count() == 1
