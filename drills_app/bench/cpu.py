"""CPU the server side spends on a load, per request: the web server's processes, and the
database's when PostgreSQL runs on this machine.

Throughput on a small machine is bounded by the CPU its processes share, so the CPU one
request costs each of them is what sizes a deployment (docs/deploy.md) and says where the
time goes. Read from Linux's /proc (utime + stime); elsewhere, or for a database on another
machine, the figure is left out rather than guessed. SQLite runs inside the web workers, so
there its cost is in theirs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.db import connection

from drills_app.procfs import PROC, cpu_seconds, descendants

LOCAL_HOSTS = {"", "localhost", "127.0.0.1", "::1"}


def database_backends() -> list[int] | None:
    """This machine's PostgreSQL processes serving the benchmark's database, other than this
    process's own connection; None where their CPU cannot be read here."""
    if connection.vendor != "postgresql" or not PROC.is_dir():
        return None
    host = connection.settings_dict.get("HOST") or ""
    if host not in LOCAL_HOSTS and not host.startswith("/"):
        return None  # another machine's process ids mean nothing here
    pids = [pid for pid, _state, _query in other_sessions()]
    readable = [pid for pid in pids if _is_postgres(pid)]
    return readable if len(readable) == len(pids) else None


def other_sessions() -> list[tuple[int, str, str]]:
    """The other sessions on this PostgreSQL database: process id, state and the start of
    the last query (the test suite names with them any session a test left open)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid, state, left(query, 160) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchall()


def _is_postgres(pid: int) -> bool:
    try:
        return "postgres" in (PROC / str(pid) / "cmdline").read_text()
    except OSError:
        return False


def _total(pids: list[int]) -> dict[int, float]:
    seconds = {pid: cpu_seconds(pid) for pid in pids}
    return {pid: value for pid, value in seconds.items() if value is not None}


@dataclass
class CpuSpent:
    """Filled in when the measured block ends: CPU seconds of the web server's processes and
    of the database's (None: not measurable here)."""

    web: float = 0.0
    database: float | None = None
    measured: bool = False

    def per_request_ms(self, requests: int) -> tuple[float, float | None]:
        if not requests:
            return 0.0, None
        database = None if self.database is None else self.database / requests * 1000
        return self.web / requests * 1000, database


def cpu_sum(spent: list[CpuSpent]) -> CpuSpent:
    """The CPU of several measured blocks together; the database's only if every block
    measured it, and measured only if every block was."""
    databases = [each.database for each in spent if each.database is not None]
    return CpuSpent(
        web=sum(each.web for each in spent),
        database=sum(databases) if len(databases) == len(spent) else None,
        measured=bool(spent) and all(each.measured for each in spent),
    )


@contextmanager
def cpu_spent(web_root: int) -> Iterator[CpuSpent]:
    """Measure the CPU the web server (the process tree under `web_root`) and the database's
    backends serving this database spend inside the block."""
    spent = CpuSpent()
    if not PROC.is_dir():
        yield spent
        return
    web_before = _total(_tree(web_root))
    backends = database_backends()
    database_before = None if backends is None else _total(backends)
    yield spent
    spent.web = _spent_between(web_before, _total(_tree(web_root)))
    backends = database_backends()
    if database_before is not None and backends is not None:
        spent.database = _spent_between(database_before, _total(backends))
    spent.measured = True


def _tree(root: int) -> list[int]:
    # Read again at the end: a worker gunicorn replaced inside the block is a new process.
    return [root, *descendants(root)]


def _spent_between(before: dict[int, float], after: dict[int, float]) -> float:
    # A process born inside the block counts whole; one that ended inside it is missed. The
    # web server's workers live on, and `bench http`'s server keeps its database connections
    # open (drills_app/bench/http_settings.py), so none of their backends ends in a block.
    return sum(max(0.0, seconds - before.get(pid, 0.0)) for pid, seconds in after.items())
