"""What Linux's /proc says about processes: who is below whom, their resident memory and
the CPU they have spent. Used by the soak (memory per process) and `bench http` (CPU per
request); every reader answers None, or nothing, for a process that is gone or unreadable.
"""

from __future__ import annotations

import os
from pathlib import Path

PROC = Path("/proc")


def _stat_fields(pid: int | str) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (which is in parentheses and
    may hold spaces): state, parent pid, ..."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return stat[stat.rfind(")") + 2 :].split()


def parent_pids() -> dict[int, int]:
    """pid → parent pid for every process we can see."""
    parents: dict[int, int] = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit() and (fields := _stat_fields(entry.name)) is not None:
            parents[int(entry.name)] = int(fields[1])
    return parents


def descendants(pid: int, parents: dict[int, int] | None = None) -> list[int]:
    """Every process below `pid` (not `pid` itself), sorted."""
    children: dict[int, list[int]] = {}
    for child, parent in (parents if parents is not None else parent_pids()).items():
        children.setdefault(parent, []).append(child)
    found: list[int] = []
    pending = list(children.get(pid, []))
    while pending:
        current = pending.pop()
        found.append(current)
        pending.extend(children.get(current, []))
    return sorted(found)


def rss_kib(pid: int) -> int | None:
    """Resident set size in KiB (VmRSS), or None once the process is gone."""
    try:
        for line in (PROC / str(pid) / "status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds the process has spent so far; None once it is gone."""
    fields = _stat_fields(pid)
    if fields is None:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
