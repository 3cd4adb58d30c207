"""`create_user`: the password from a prompt, a file or the command line (one of them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

PASSWORD = "a-long-passphrase-9"


def create_user(*args: str) -> str:
    out = StringIO()
    call_command(
        "create_user", "priya", "--group", "operator", *args, stdout=out, stderr=StringIO()
    )
    return out.getvalue()


def signs_in(password: str) -> bool:
    response = Client().post("/accounts/login/", {"username": "priya", "password": password})
    return response.status_code == 302


@dataclass
class Terminal:
    """What the person types at each getpass prompt, in order, and the prompts shown."""

    answers: list[str] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)

    def getpass(self, prompt: str = "Password: ", stream: object = None) -> str:
        self.prompts.append(prompt)
        return self.answers[len(self.prompts) - 1]


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> Terminal:
    fake = Terminal()
    monkeypatch.setattr("getpass.getpass", fake.getpass)
    return fake


def test_password_prompt_asks_twice_and_the_person_signs_in(db, terminal):
    terminal.answers = [PASSWORD, PASSWORD]

    output = create_user("--password-prompt")

    assert len(terminal.prompts) == 2
    assert PASSWORD not in output
    assert signs_in(PASSWORD)


def test_password_prompt_refuses_two_different_answers(db, terminal):
    terminal.answers = [PASSWORD, PASSWORD + "x"]

    with pytest.raises(CommandError, match="differ"):
        create_user("--password-prompt")

    assert not User.objects.filter(username="priya").exists()


def test_password_prompt_refuses_an_empty_password(db, terminal):
    terminal.answers = [""]

    with pytest.raises(CommandError, match="empty"):
        create_user("--password-prompt")

    assert not User.objects.filter(username="priya").exists()


def test_password_file_gives_its_first_line_stripped(db, tmp_path: Path):
    secret = tmp_path / "password"
    secret.write_text(f"  {PASSWORD}  \nsecond line is not read\n", encoding="utf-8")

    create_user("--password-file", str(secret))

    assert signs_in(PASSWORD)
    assert not signs_in(f"  {PASSWORD}  ")


@pytest.mark.parametrize(
    "content", ["", "\n", "   \nlater line\n"], ids=["empty", "newline", "blank"]
)
def test_password_file_refuses_an_empty_password(db, tmp_path: Path, content):
    secret = tmp_path / "password"
    secret.write_text(content, encoding="utf-8")

    with pytest.raises(CommandError, match="empty"):
        create_user("--password-file", str(secret))

    assert not User.objects.filter(username="priya").exists()


def test_password_file_that_cannot_be_read_is_refused(db, tmp_path: Path):
    with pytest.raises(CommandError, match="cannot read"):
        create_user("--password-file", str(tmp_path / "missing"))

    assert not User.objects.filter(username="priya").exists()


def test_password_on_the_command_line_still_works(db):
    create_user("--password", PASSWORD)

    assert signs_in(PASSWORD)


def test_an_empty_password_on_the_command_line_is_refused(db):
    with pytest.raises(CommandError, match="empty"):
        create_user("--password", "")

    assert not User.objects.filter(username="priya").exists()


@pytest.mark.parametrize(
    "sources",
    [
        ("--password", PASSWORD, "--password-prompt"),
        ("--password", PASSWORD, "--password-file", "/dev/null"),
        ("--password-prompt", "--password-file", "/dev/null"),
    ],
    ids=["line-and-prompt", "line-and-file", "prompt-and-file"],
)
def test_password_sources_are_mutually_exclusive(db, sources):
    with pytest.raises(CommandError, match="not allowed with"):
        create_user(*sources)

    assert not User.objects.filter(username="priya").exists()


def test_without_a_password_console_sign_in_stays_disabled(db):
    create_user()

    assert not signs_in("")
    assert not User.objects.get(username="priya").has_usable_password()
