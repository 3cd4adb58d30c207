"""Names of agents and people: one spelling per actor, readable wherever it is shown, and a
refusal (never a traceback) for a name the database or a reader cannot take."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError

from reconcile_app.models import Principal

CAPABILITY = "warehouse-pick:pick_pallet"
# "priya-bot" in fullwidth letters, as an East Asian input method types it.
FULLWIDTH = "".join(chr(ord(c) + 0xFEE0) if c.isalpha() else c for c in "priya-bot")


def create_principal(name: str) -> None:
    call_command(
        "create_principal", name, "--capability", CAPABILITY, stdout=StringIO(), stderr=StringIO()
    )


def create_user(name: str) -> None:
    call_command("create_user", name, "--group", "auditor", stdout=StringIO(), stderr=StringIO())


@pytest.mark.parametrize("create", [create_principal, create_user])
def test_a_fullwidth_name_is_one_name_for_the_principal_and_its_account(estate, create):
    create(FULLWIDTH)

    principal = Principal.objects.get(user__username="priya-bot")
    assert principal.name == "priya-bot"


@pytest.mark.parametrize("create", [create_principal, create_user])
@pytest.mark.parametrize(
    "name",
    [
        "",
        "priya\u202ebot",  # right-to-left override: reverses the approval page's sentence
        "priya\u200bbot",
        "priya bot",
        "priya\x1bbot",
        "ops/bot",
        "..",
        "p" * 151,  # over the column: PostgreSQL raised DataError, SQLite stored it
    ],
)
def test_a_name_a_reader_or_the_database_cannot_take_is_refused(estate, create, name):
    with pytest.raises(CommandError, match="name"):
        create(name)
    assert not Principal.objects.filter(name=name).exists()


@pytest.mark.parametrize("create", [create_principal, create_user])
@pytest.mark.parametrize(("first", "second"), [("rhys", "Rhys"), ("straße", "STRASSE")])
def test_names_equal_but_for_case_are_one_name(estate, create, first, second):
    create_user(first)

    with pytest.raises(CommandError, match="differ only in case"):
        create(second)
    assert not User.objects.filter(username=second).exists()


def test_names_in_other_scripts_are_taken_as_written(estate):
    create_principal("代理-東京")
    create_user("חנה")
    create_user("José")

    assert set(Principal.objects.values_list("name", flat=True)) >= {"代理-東京", "חנה", "José"}
