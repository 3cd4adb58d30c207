"""create_principal and create_user run twice at once for one name (PostgreSQL).

Each asked whether the name was free, then created the account: every run but the first broke
the username's unique index, a traceback where one after the other says the name is taken."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection, connections

from reconcile_app.errors import DomainError
from reconcile_app.models import Principal
from reconcile_app.services.principals import principal_create, user_create

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]

RUNS = 6


def at_once(create: Callable[[], Any]) -> list[str]:
    barrier = threading.Barrier(RUNS)
    seen: list[str] = []

    def run() -> None:
        try:
            barrier.wait(timeout=30)
            create()
            seen.append("created")
        except DomainError as exc:
            seen.append(exc.code)
        except Exception as exc:
            seen.append(f"{type(exc).__name__}: {exc}")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run) for _ in range(RUNS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return sorted(seen)


@pytest.mark.parametrize(
    "create",
    [
        lambda: principal_create(name="picker", capabilities=["warehouse-pick:pick_pallet"]),
        lambda: user_create(username="picker", roles=["operator"]),
    ],
    ids=["create_principal", "create_user"],
)
def test_one_name_created_at_once_is_created_once_and_refused_as_taken(create):
    seen = at_once(create)

    assert seen == ["created"] + ["name_taken"] * (RUNS - 1), seen
    assert User.objects.filter(username="picker").count() == 1
    assert Principal.objects.filter(name="picker").count() == 1
