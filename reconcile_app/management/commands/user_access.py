from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reconcile_app.errors import DomainError
from reconcile_app.management.command_runner import command_runner
from reconcile_app.services.person_access import person_enabled_set, person_tokens_revoke


class Command(BaseCommand):
    help = (
        "Take a person's access back, at once on every process: revoke-tokens (every "
        "personal token; console sign-in stays), disable (no sign-in, every token revoked, "
        "every console session ended) / enable (sign-in again; they make new tokens in the "
        "console). Each needs --reason and is audited with the account that ran it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("change", choices=["revoke-tokens", "disable", "enable"])
        parser.add_argument("name")
        parser.add_argument("--reason", required=True)

    def handle(self, *args: Any, change: str, name: str, reason: str, **options: Any) -> None:
        actor = command_runner("user_access")
        try:
            if change == "revoke-tokens":
                revoked = person_tokens_revoke(username=name, reason=reason, actor=actor)
                self.stdout.write(f"{name}: {len(revoked)} token(s) revoked")
            else:
                person_enabled_set(
                    username=name, enabled=change == "enable", reason=reason, actor=actor
                )
                self.stdout.write(f"{name}: {change}d")
        except DomainError as exc:
            raise CommandError(exc.detail) from exc
