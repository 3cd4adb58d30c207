from __future__ import annotations

import getpass
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reconcile_app.errors import DomainError
from reconcile_app.management.command_runner import command_runner
from reconcile_app.services.principals import PEOPLE_ROLES, user_create


def password_from_prompt() -> str:
    """Ask twice without echo; a typo must not become the only way in."""
    first = getpass.getpass("Password: ")
    if not first:
        raise CommandError("the password is empty")
    if getpass.getpass("Password (again): ") != first:
        raise CommandError("the two passwords differ; nothing was created")
    return first


def password_from_file(path: str) -> str:
    """The file's first line, stripped (a trailing newline is not part of the password)."""
    try:
        with Path(path).open(encoding="utf-8") as handle:
            first_line = handle.readline()
    except OSError as exc:
        raise CommandError(f"cannot read the password file {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise CommandError(f"the password file {path} is not UTF-8 text") from exc
    password = first_line.strip()
    if not password:
        raise CommandError(f"the password file {path} starts with an empty line")
    return password


class Command(BaseCommand):
    help = (
        "Create a console user in a role group. Prints a personal API token alone on the last "
        "line, once: `Authorization: Bearer <token>` then acts as that person. The password "
        "comes from --password-prompt or --password-file (--password P leaves it in the "
        "shell's history and the process list); without one, console login stays disabled."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument(
            "--group", action="append", required=True, choices=[str(r) for r in PEOPLE_ROLES]
        )
        source = parser.add_mutually_exclusive_group()
        source.add_argument("--password", default=None, help="the password itself")
        source.add_argument(
            "--password-prompt",
            action="store_true",
            help="ask for the password twice on the terminal, without echo",
        )
        source.add_argument(
            "--password-file",
            default=None,
            metavar="PATH",
            help="read the password from the first line of PATH",
        )
        parser.add_argument(
            "--reason",
            default="",
            help="why the person gets this role: on the audit trail (user.create)",
        )

    def handle(
        self,
        *args: Any,
        name: str,
        group: list[str],
        reason: str,
        password: str | None,
        password_prompt: bool,
        password_file: str | None,
        **options: Any,
    ) -> None:
        if password_prompt:
            password = password_from_prompt()
        elif password_file is not None:
            password = password_from_file(password_file)
        elif password == "":
            raise CommandError("the password is empty")
        try:
            user, token = user_create(
                username=name,
                roles=group,
                password=password,
                actor=command_runner("create_user"),
                reason=reason,
            )
        except DomainError as exc:
            raise CommandError(exc.detail) from exc
        self.stderr.write(f"user {user.username} created in {', '.join(group)}")
        if password is None:
            self.stderr.write("no password set: console login is disabled until one is set")
        self.stderr.write("the token below is shown once; store it now")
        self.stdout.write(token)
