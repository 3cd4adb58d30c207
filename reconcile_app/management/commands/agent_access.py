from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reconcile_app.errors import DomainError
from reconcile_app.management.command_runner import command_runner
from reconcile_app.services.agent_access import (
    agent_enabled_set,
    agent_key_rotate,
    capabilities_revoke,
)


class Command(BaseCommand):
    help = (
        "Take an agent's access back, at once on every process: rotate-key (revoke its keys, "
        "print a new one once), disable / enable, revoke-capability CAPABILITY ... (any the "
        "agent holds: DECISION_CLASS:ACTION, attest:SOURCE or fact:PATTERN). Each needs "
        "--reason and is audited."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "change", choices=["rotate-key", "disable", "enable", "revoke-capability"]
        )
        parser.add_argument("name")
        parser.add_argument("capabilities", nargs="*", metavar="CAPABILITY")
        parser.add_argument("--reason", required=True)

    def handle(
        self,
        *args: Any,
        change: str,
        name: str,
        capabilities: list[str],
        reason: str,
        **options: Any,
    ) -> None:
        actor = command_runner("agent_access")
        if (change == "revoke-capability") != bool(capabilities):
            raise CommandError("revoke-capability names capabilities; the others name none")
        try:
            if change == "rotate-key":
                key = agent_key_rotate(name=name, reason=reason, actor=actor)
                self.stderr.write(
                    f"{name}: every earlier key revoked; the new key below is shown once"
                )
                self.stdout.write(key)
            elif change in ("disable", "enable"):
                agent_enabled_set(name=name, enabled=change == "enable", reason=reason, actor=actor)
                self.stdout.write(f"{name}: {change}d")
            else:
                removed = capabilities_revoke(
                    name=name, capabilities=capabilities, reason=reason, actor=actor
                )
                self.stdout.write(f"{name}: withdrawn {', '.join(removed)}")
        except DomainError as exc:
            raise CommandError(exc.detail) from exc
