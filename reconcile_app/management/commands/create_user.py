from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reconcile_app.errors import DomainError
from reconcile_app.services.principals import PEOPLE_ROLES, user_create


class Command(BaseCommand):
    help = (
        "Create a console user in a role group. Prints a personal API token alone on the last "
        "line, once: `Authorization: Bearer <token>` then acts as that person."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument(
            "--group", action="append", required=True, choices=[str(r) for r in PEOPLE_ROLES]
        )
        parser.add_argument("--password", default=None)

    def handle(
        self, *args: Any, name: str, group: list[str], password: str | None, **options: Any
    ) -> None:
        try:
            user, token = user_create(username=name, roles=group, password=password)
        except DomainError as exc:
            raise CommandError(exc.detail) from exc
        self.stderr.write(f"user {user.username} created in {', '.join(group)}")
        if password is None:
            self.stderr.write("no password set: console login is disabled until one is set")
        self.stderr.write("the token below is shown once; store it now")
        self.stdout.write(token)
