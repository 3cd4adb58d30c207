from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reconcile_app.errors import DomainError
from reconcile_app.management.command_runner import command_runner
from reconcile_app.services.principals import principal_create


class Command(BaseCommand):
    help = (
        "Create an agent (a service principal) with its capabilities. "
        "Prints the API key alone on the last line, once: only its hash is stored."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument(
            "--capability",
            action="append",
            default=[],
            metavar="CAPABILITY",
            help="repeatable: DECISION_CLASS:ACTION (reconcile the class, commit the action), "
            "attest:SOURCE (append evidence of that source) or fact:PATTERN (write fact "
            "records whose key matches the glob)",
        )
        parser.add_argument(
            "--reason",
            default="",
            help="why the agent gets this access: on the audit trail (principal.create)",
        )

    def handle(
        self, *args: Any, name: str, capability: list[str], reason: str, **options: Any
    ) -> None:
        try:
            principal, key = principal_create(
                name=name,
                capabilities=capability,
                actor=command_runner("create_principal"),
                reason=reason,
            )
        except DomainError as exc:
            raise CommandError(exc.detail) from exc
        capabilities = ", ".join(str(c) for c in principal.capabilities.all()) or "none"
        self.stderr.write(f"principal {principal.name} created with capabilities: {capabilities}")
        self.stderr.write("the key below is shown once; store it now")
        self.stdout.write(key)
