"""The embedded default's cache: Django's file cache, with counters that count.

Django's file cache adds one to a counter by reading its file and writing a new one, with
nothing held between the two: two gunicorn workers counting at once both read 5 and both
write 6. Two processes sending 500 requests each through the API throttle's counter kept 548
of the 1,000 counts (2026-12-04), so on the embedded default an agent got about twice its
rate, and a sign-in or an API key about twice its failures before the lockout. Redis counts
atomically (`config/cache.py`); here every read and write of an entry (`get`, `set`, `add`,
`incr` and so `decr`, `touch`, `delete`, and the throttle's `count_window`) holds an
exclusive lock on one of 256 lock files chosen by the key, so processes on this host take
turns per key.

An entry is rewritten in place, under its lock: Django writes a new file and renames it
over the old, and on this machine's ext4 the rename alone took 160 µs, a third of the
throttle's whole step. A file left half written (its process killed) reads as missing. A
counter keeps its expiry when it changes, as Redis's INCR does (Django's reset it to the
cache's default).

The directory is culled only when it holds `MAX_ENTRIES` files, expired ones first (Django
deletes a random third, live or not): a lockout's counter must not vanish because someone
filled the cache with sign-ins under other names. Only an entry's first write culls, not
every change (Django lists the directory on every `set`).

A directory that takes no more writes (its disk full, out of inodes, remounted read-only) is
the shared cache out of reach, as a Redis that refuses writes is: `CacheUnavailable`, which the
API answers 503 `cache_unavailable` (reconcile_app/api/middleware.py). Seen live with the var
directory on a full filesystem: the throttle's counter for a new minute could not be written,
and every API request answered 500 `internal_error`.
"""

from __future__ import annotations

import os
import pickle
import random
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.filebased import FileBasedCache
from django.core.files import locks

LOCKS = "locks"  # a subdirectory: `clear()` and the cull only touch the cache's own files


class CacheUnavailable(OSError):
    """The cache's directory refused a write (ENOSPC, EDQUOT, EROFS, EIO, ...)."""


@contextmanager
def _writes_refused_as_unavailable() -> Iterator[None]:
    try:
        yield
    except CacheUnavailable:
        raise
    except OSError as error:
        raise CacheUnavailable(error.errno, f"the file cache refused a write: {error}") from error


class FileCache(FileBasedCache):
    if TYPE_CHECKING:  # Django's own helpers and settings, which its type stubs leave out
        _dir: str
        _max_entries: int
        _cull_frequency: int

        def _key_to_file(self, key: Any, version: int | None = None) -> str: ...
        def _delete(self, fname: str) -> bool: ...
        def _createdir(self) -> None: ...
        def _list_cache_files(self) -> list[str]: ...

    @contextmanager
    def _entry_lock(self, fname: str) -> Iterator[None]:
        """Held while one process reads or rewrites the entry in `fname`. Never take another
        inside it (a culling does): flock is per open file, so a process would wait on itself
        for a stripe it holds, and two processes on each other's."""
        stripe = os.path.basename(fname)[:2]  # the key's md5: 256 lock files at most
        path = os.path.join(self._dir, LOCKS, f"{stripe}.lock")
        flags = os.O_RDWR | os.O_CREAT
        with _writes_refused_as_unavailable():
            try:
                descriptor = os.open(path, flags, 0o600)  # no other user may hold our locks
            except FileNotFoundError:  # the first lock, or the directory was removed meanwhile
                self._createdir()  # as Django makes it: 0o700
                os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
                descriptor = os.open(path, flags, 0o600)
        with os.fdopen(descriptor, "r+b") as lock_file:
            locks.lock(lock_file, locks.LOCK_EX)
            try:
                yield
            finally:
                locks.unlock(lock_file)

    def _current(self, fname: str) -> tuple[Any, float | None] | None:
        """The value in `fname` and its expiry (None: never), or None when missing or expired."""
        try:
            with open(fname, "rb") as file:
                # Our own files, read as Django's file cache reads them.
                expiry = pickle.load(file)  # noqa: S301  # nosec B301
                if expiry is None or expiry >= time.time():
                    return pickle.loads(zlib.decompress(file.read())), expiry  # noqa: S301  # nosec B301
        except FileNotFoundError:
            return None
        except (EOFError, pickle.UnpicklingError, zlib.error, ValueError, TypeError):
            pass  # half written by a process killed meanwhile: as good as missing
        self._delete(fname)  # expired or unreadable: gone, as Django's get leaves it
        return None

    def _write(self, fname: str, value: Any, expiry: float | None) -> None:
        """Write `value` with `expiry` in Django's format over the file, in place (the
        caller holds the key's lock, which every reader takes too)."""
        content = pickle.dumps(expiry, self.pickle_protocol) + zlib.compress(
            pickle.dumps(value, self.pickle_protocol)
        )
        flags = os.O_WRONLY | os.O_CREAT
        with _writes_refused_as_unavailable():
            try:
                descriptor = os.open(fname, flags, 0o600)
            except FileNotFoundError:  # the directory was removed meanwhile
                self._createdir()
                descriptor = os.open(fname, flags, 0o600)
            try:
                written = 0
                while written < len(content):
                    written += os.pwrite(descriptor, content[written:], written)
                os.ftruncate(descriptor, len(content))
            finally:
                os.close(descriptor)

    def set(
        self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> None:
        fname = self._key_to_file(key, version)
        self._cull_before_adding(fname)
        with self._entry_lock(fname):
            self._write(fname, value, self.get_backend_timeout(timeout))

    def delete(self, key: Any, version: int | None = None) -> bool:
        fname = self._key_to_file(key, version)
        with self._entry_lock(fname):
            return bool(self._delete(fname))

    def get(self, key: Any, default: Any = None, version: int | None = None) -> Any:
        fname = self._key_to_file(key, version)
        with self._entry_lock(fname):
            current = self._current(fname)
        return default if current is None else current[0]

    def has_key(self, key: Any, version: int | None = None) -> bool:
        fname = self._key_to_file(key, version)
        with self._entry_lock(fname):
            return self._current(fname) is not None

    def _cull(self) -> None:
        """At `MAX_ENTRIES` files, delete the expired ones; only if that is not enough, a
        random share of the rest (`CULL_FREQUENCY`), as Django does."""
        files = self._list_cache_files()
        if len(files) < self._max_entries:
            return
        live = [fname for fname in files if not self._expired_deleted(fname)]
        if len(live) < self._max_entries:
            return
        if self._cull_frequency == 0:
            self.clear()
            return
        for fname in random.sample(live, len(live) // self._cull_frequency):
            with self._entry_lock(fname):
                self._delete(fname)

    def _cull_before_adding(self, fname: str) -> None:
        """Make room before a new entry's first write (not on every change of a counter), and
        before its lock is taken (see `_entry_lock`)."""
        if not os.path.exists(fname):
            self._cull()

    def _expired_deleted(self, fname: str) -> bool:
        with self._entry_lock(fname):
            # Reading deletes an expired or unreadable entry.
            return os.path.exists(fname) and self._current(fname) is None

    def add(
        self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> bool:
        fname = self._key_to_file(key, version)
        self._cull_before_adding(fname)
        with self._entry_lock(fname):
            if self._current(fname) is not None:
                return False
            self._write(fname, value, self.get_backend_timeout(timeout))
            return True

    def incr(self, key: Any, delta: int = 1, version: int | None = None) -> Any:
        changed = self._changed(key, version, lambda value, expiry: (value + delta, expiry))
        if changed is None:
            raise ValueError(f"Key '{key}' not found.")
        return changed[0]

    def touch(self, key: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        expiry = self.get_backend_timeout(timeout)
        return self._changed(key, version, lambda value, _: (value, expiry)) is not None

    def _changed(
        self,
        key: Any,
        version: int | None,
        change: Callable[[Any, float | None], tuple[Any, float | None]],
    ) -> tuple[Any, float | None] | None:
        """The entry's value and expiry after `change`, written under its lock; None when
        there is no entry to change."""
        fname = self._key_to_file(key, version)
        with self._entry_lock(fname):
            current = self._current(fname)
            if current is None:
                return None
            changed = change(*current)
            self._write(fname, *changed)
            return changed

    def count_window(self, current: str, previous: str, lifetime: int) -> tuple[int, int]:
        """Counter `current` plus one (a new one lives `lifetime` seconds) and the value of
        counter `previous` (0 when missing): the throttle's step, as `RedisCache` has it."""
        fname = self._key_to_file(current)
        self._cull_before_adding(fname)
        with self._entry_lock(fname):
            counted = self._current(fname)
            expiry: float | None
            if counted is None:
                count, expiry = 1, time.time() + lifetime
            else:
                count, expiry = counted[0] + 1, counted[1]
            self._write(fname, count, expiry)
        return count, int(self.get(previous, 0))
