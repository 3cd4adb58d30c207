"""PostgreSQL transaction-level advisory locks on names: writers of one name (a fact key, a
preference's target, a sandbox source) take turns until their transaction ends. SQLite's
IMMEDIATE transactions serialise every writer already, so there nothing is taken.

Each namespace is a 32-bit constant of its own (four ASCII letters); a name's id is the first
four bytes of its SHA-256, signed, as the lock function's second integer. Two names whose ids
collide share a lock: harmless, a little less concurrency.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from django.db import connection


def name_lock_id(name: str) -> int:
    """The name's advisory-lock id: a signed 32-bit integer."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big", signed=True)


def lock_ids(names: Iterable[str]) -> list[int]:
    """The names' lock ids, each once, in the one order every holder takes them: the ids'
    (never the names': two names whose ids collide share a lock, and sorting by name could
    then take it at a place that depends on the other names each holder holds)."""
    return sorted({name_lock_id(name) for name in names})


def names_held(namespace: int, names: Iterable[str]) -> None:
    """Inside a transaction: the names' locks, so two holders never wait on each other."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for lock_id in lock_ids(names):
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [namespace, lock_id])
