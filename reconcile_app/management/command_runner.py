"""The audit's actor for a change made from the command line."""

from __future__ import annotations

import getpass
from dataclasses import dataclass


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
    return CommandRunner(username=f"{command} ({account})")
