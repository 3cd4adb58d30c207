"""In-process copies of what every request at the gate reads and almost nothing changes —
contracts, sources, principals with their keys and capabilities, the quarantine set —
valid while their epoch is.

The two epochs (ConfigurationEpoch, QuarantineEpoch) move in the same transaction as any
change they cover (database triggers, migration 0018), and are read in one query per request
(`epochs_pinned`). A copy taken under an epoch is used only while a request pins that same
epoch, so every process on every machine sees a change from its first request after the
change committed. Outside a pinned request (the console, workers, commands) nothing is
cached: each call reads the database, exactly as before.

A copy is loaded after its epoch was read, so it is never older than its epoch says; it may
be newer, which is safe: the quarantine view's epoch is checked again inside the snapshot's
transaction (services/quarantine.epoch_check), and a mismatch runs the protocol again with
the epochs read afresh.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from django.db import connection

from config.prepared_cursor import hot_cursor
from reconcile_app.models import ConfigurationEpoch, QuarantineEpoch

T = TypeVar("T")
EpochKind = Literal["configuration", "quarantine"]


@dataclass(frozen=True)
class Epochs:
    # None: the row is missing (a flushed test database): then nothing is cached.
    configuration: int | None
    quarantine: int | None


_pinned: ContextVar[Epochs | None] = ContextVar("reconcile_epochs", default=None)

_EPOCHS_SQL = (
    f"SELECT (SELECT epoch FROM {ConfigurationEpoch._meta.db_table} WHERE id = 1), "  # noqa: S608  # nosec B608
    f"(SELECT epoch FROM {QuarantineEpoch._meta.db_table} WHERE id = 1)"
)


# The same, each row held FOR SHARE until the transaction ends (PostgreSQL).
_EPOCHS_HELD_SQL = (
    f"SELECT (SELECT epoch FROM {ConfigurationEpoch._meta.db_table} WHERE id = 1 FOR SHARE), "  # noqa: S608  # nosec B608
    f"(SELECT epoch FROM {QuarantineEpoch._meta.db_table} WHERE id = 1 FOR SHARE)"
)


def epochs_read() -> Epochs:
    """Both epochs, in one query."""
    return _epochs(_EPOCHS_SQL)


def epochs_held() -> Epochs:
    """Inside a transaction: both epochs, held until it ends. A change either covers (a
    key, a capability, a contract, a source, a quarantine) moves its epoch in its own
    transaction, so it waits for this one to commit, or has committed and is seen here: on
    PostgreSQL the rows are locked FOR SHARE; SQLite's IMMEDIATE transactions serialise
    writers anyway."""
    return _epochs(_EPOCHS_HELD_SQL if connection.vendor == "postgresql" else _EPOCHS_SQL)


def epochs_seen() -> Epochs:
    """The epochs the request pinned, or (unpinned) as they are now."""
    return _pinned.get() or epochs_read()


def _epochs(sql: str) -> Epochs:
    with hot_cursor(sql) as cursor:
        cursor.execute(sql)
        configuration, quarantine = cursor.fetchone()
    return Epochs(configuration=configuration, quarantine=quarantine)


@contextmanager
def epochs_pinned() -> Iterator[Epochs]:
    """Read the epochs once and let the caches serve copies taken under them until exit."""
    token = _pinned.set(epochs_read())
    try:
        yield _pinned.get()  # type: ignore[misc]
    finally:
        _pinned.reset(token)


def epochs_repin() -> None:
    """Inside a pinned scope, read the epochs again (after a quarantine moved under us)."""
    if _pinned.get() is not None:
        _pinned.set(epochs_read())


def pinned_epoch(kind: EpochKind) -> int | None:
    pinned = _pinned.get()
    return getattr(pinned, kind) if pinned is not None else None


class EpochCache(Generic[T]):
    """Values by key, each valid while the epoch it was loaded under is pinned."""

    def __init__(self, kind: EpochKind, max_entries: int = 10_000) -> None:
        self.kind: EpochKind = kind
        self.max_entries = max_entries
        self._entries: dict[Hashable, tuple[int, T]] = {}

    def get(self, key: Hashable, load: Callable[[], T]) -> T:
        epoch = pinned_epoch(self.kind)
        if epoch is None:
            return load()
        hit = self._entries.get(key)
        if hit is not None and hit[0] == epoch:
            return hit[1]
        value = load()
        if len(self._entries) >= self.max_entries:
            # Entries of a past epoch are dead weight; a full cache of live ones starts over.
            self._entries = {k: v for k, v in self._entries.items() if v[0] == epoch}
            if len(self._entries) >= self.max_entries:
                self._entries.clear()
        self._entries[key] = (epoch, value)
        return value

    def clear(self) -> None:
        self._entries.clear()
