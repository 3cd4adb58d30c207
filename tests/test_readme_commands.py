"""README's table of management commands against the commands themselves: every command the
project adds has a row, and every option a command takes is named in it (a synopsis that left
options out sent readers to `--help` for what the README claims to list)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.core.management import get_commands, load_command_class
from django.core.management.base import BaseCommand

README = Path(__file__).resolve().parent.parent / "README.md"
PROJECT_APPS = ("reconcile_app", "drills_app", "lineage_app", "sandbox_app")
# Django's own command, wrapped by the project to take a lock; README's upgrade sections
# name it where it is run.
NOT_IN_THE_TABLE = {"migrate"}


def table_rows() -> dict[str, str]:
    section = README.read_text().split("## Management commands", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, list[str]] = {}
    for line in section.splitlines():
        match = re.match(r"\| `(\w+)", line)
        if match:
            rows.setdefault(match.group(1), []).append(line)
    return {name: "\n".join(lines) for name, lines in rows.items()}


def project_commands() -> dict[str, str]:
    return {
        name: app
        for name, app in get_commands().items()
        if app in PROJECT_APPS and name not in NOT_IN_THE_TABLE
    }


def own_options(name: str, app: str) -> list[list[str]]:
    """Each option the command adds, as its long spellings (Django's common ones left out)."""
    common = {
        option
        for action in BaseCommand().create_parser("manage.py", "any")._actions
        for option in action.option_strings
    }
    parser = load_command_class(app, name).create_parser("manage.py", name)
    return [
        spellings
        for action in parser._actions
        if (spellings := [o for o in action.option_strings if o.startswith("--")])
        and not set(spellings) & common
    ]


def test_every_command_the_project_adds_has_a_row():
    assert sorted(set(project_commands()) - set(table_rows())) == []


@pytest.mark.parametrize("name", sorted(project_commands()))
def test_every_option_of_a_command_is_named_in_its_row(name):
    row = table_rows()[name]
    missing = [
        spellings[0]
        for spellings in own_options(name, project_commands()[name])
        if not any(re.search(rf"{re.escape(s)}\b", row) for s in spellings)
    ]
    assert missing == [], f"README's row for {name} does not name {missing}"
