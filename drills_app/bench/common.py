from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import connection


@contextmanager
def scratch_database(keep: bool = False) -> Iterator[str]:
    """A throwaway database of the configured engine, so benchmarks never touch real data.

    SQLite gets a file (not :memory:) so the figures include real I/O and WAL.
    """
    if connection.vendor == "sqlite":
        path = Path(settings.VAR_DIR) / f"scratch-{os.getpid()}.sqlite3"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        connection.settings_dict.setdefault("TEST", {})["NAME"] = str(path)
    else:
        # Never the test suite's name: a benchmark beside a test run must not drop its database.
        connection.settings_dict.setdefault("TEST", {})["NAME"] = f"bench_scratch_{os.getpid()}"
    old_name = connection.settings_dict["NAME"]
    name = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        yield f"{connection.vendor}:{name}"
    finally:
        if not keep:
            connection.creation.destroy_test_db(old_name, verbosity=0)


def free_port() -> int:
    """A port nothing listens on now, for a server a benchmark or soak starts."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
