"""The audit's actor for a change made from the command line."""

from __future__ import annotations

import getpass
from dataclasses import dataclass

from reconcile_app.models import AuditEvent


@dataclass(frozen=True)
class CommandRunner:
    """The command and the account that ran it (audit rows name it as `username`)."""

    username: str
    pk: None = None


def command_runner(command: str) -> CommandRunner:
    """`COMMAND (ACCOUNT)`: who granted or took back access, when no person signed in."""
    try:
        account = getpass.getuser()
    except (KeyError, OSError):  # a container's uid with no passwd entry and no LOGNAME
        account = "unknown account"
    # getpass reads LOGNAME or USER first, which may say anything: a name longer than the
    # audit row holds failed the command (PostgreSQL: value too long), granting nothing.
    limit: int = AuditEvent._meta.get_field("actor_name").max_length  # type: ignore[assignment]
    room = limit - len(command) - len(" ()")
    if len(account) > room:
        account = account[: room - 1] + "…"
    return CommandRunner(username=f"{command} ({account})")
