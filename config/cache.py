"""Which cache the processes share (throttles, sign-in and key failure counters, heartbeats).

- `RECONCILE_CACHE_URL` set: that Redis.
- else, a `redis://` or `rediss://` broker: the same Redis server, on the database after the
  broker's (`/0` → `/1`, …, `/15` → `/0`, Redis having sixteen by default). Never the
  broker's own database: the cache may be cleared (FLUSHDB), and that must not drop queued
  tasks. So every host that shares the broker shares throttles and lockouts without another
  variable to set.
- else (the embedded filesystem broker, or another broker): a file cache under the var
  directory, which only processes on one host share (`config/file_cache.py`: its counters
  change under a lock, as Redis's do atomically).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from django.core.cache.backends import redis as django_redis
from django.core.exceptions import ImproperlyConfigured
from redis import ConnectionPool, Redis
from redis.commands.core import Script
from redis.connection import AbstractConnection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError
from redis.exceptions import TimeoutError as RedisTimeoutError

REDIS_SCHEMES = ("redis", "rediss")
FILE_CACHE_MAX_ENTRIES = 10_000
REDIS_DATABASES = 16


def cache_url_from_broker(broker_url: str) -> str:
    """The Redis URL of the database after the broker's, or "" for a broker not on Redis."""
    parts = urlsplit(broker_url)
    if parts.scheme not in REDIS_SCHEMES:
        return ""
    number = parts.path.strip("/") or "0"
    if not number.isdigit():
        raise ImproperlyConfigured(
            f"CELERY_BROKER_URL names Redis database {number!r}, not a number; "
            "set RECONCILE_CACHE_URL explicitly."
        )
    cache_database = (int(number) + 1) % REDIS_DATABASES
    return urlunsplit(parts._replace(path=f"/{cache_database}"))


def cache_settings(*, cache_url: str, broker_url: str, var_dir: Path) -> dict[str, Any]:
    """Django's CACHES for the configured cache URL, broker URL and var directory."""
    location = cache_url or cache_url_from_broker(broker_url)
    if location:
        return {
            "default": {
                "BACKEND": "config.cache.RedisCache",
                "LOCATION": location,
            }
        }
    return {
        "default": {
            "BACKEND": "config.file_cache.FileCache",
            "LOCATION": str(var_dir / "cache"),
            # Django's 300 would cull live lockout counters once 300 sign-in names had failed.
            "OPTIONS": {"MAX_ENTRIES": FILE_CACHE_MAX_ENTRIES},
        }
    }


# INCR only a counter that exists, as Django's incr promises, in one round trip. Django's own
# asks EXISTS then INCR: two trips, and a key expiring between them came back without expiry.
INCR_EXISTING = """
if redis.call('exists', KEYS[1]) == 1 then
    return redis.call('incrby', KEYS[1], ARGV[1])
end
return false
"""


# A rate window's counter plus one (started with its lifetime when new) and the previous
# window's count, in one round trip: the API throttle's whole conversation with the cache.
COUNT_WINDOW = """
local count = redis.call('incr', KEYS[1])
if count == 1 then
    redis.call('expire', KEYS[1], ARGV[1])
end
return {count, redis.call('get', KEYS[2]) or 0}
"""


class SharedRedisCacheClient(django_redis.RedisCacheClient):
    """Django's Redis cache client, with one `redis.Redis` per connection pool.

    Django builds a new `redis.Redis` for every cache operation, and each builds its table of
    some 170 response callbacks: most of the cost of a cache read in Python. A client is
    thread-safe (each command takes a connection from the pool), so one per pool serves every
    operation and thread.
    """

    def __init__(self, servers: list[str], **options: Any) -> None:
        super().__init__(servers, **options)
        self._clients: dict[int, Redis] = {}
        self._clients_lock = threading.Lock()
        self._client = self._client_for
        # Sent by digest (EVALSHA), the script's text only when the server does not know it.
        self._incr_existing: Script | None = None
        self._count_window: Script | None = None
        self._kept = _KeptConnection()

    def _client_for(self, *, connection_pool: ConnectionPool) -> Redis:
        client = self._clients.get(id(connection_pool))
        if client is None:
            with self._clients_lock:
                client = self._clients.setdefault(
                    id(connection_pool), Redis(connection_pool=connection_pool)
                )
        return client

    def incr(self, key: Any, delta: int) -> Any:
        client = self.get_client(key, write=True)
        if self._incr_existing is None:
            self._incr_existing = client.register_script(INCR_EXISTING)
        value = self._script_run(client, self._incr_existing, [key], [delta])
        if value is None:
            raise ValueError(f"Key {key!r} not found.")
        return value

    def count_window(self, current: Any, previous: Any, lifetime: int) -> tuple[int, int]:
        client = self.get_client(current, write=True)
        if self._count_window is None:
            self._count_window = client.register_script(COUNT_WINDOW)
        count, before = self._script_run(
            client, self._count_window, [current, previous], [lifetime]
        )
        return int(count), int(before)

    def _script_run(self, client: Redis, script: Script, keys: list[Any], args: list[Any]) -> Any:
        """EVALSHA on this thread's own connection, straight to the socket.

        Every script the cache runs goes this way; the throttle runs one on every API request.
        Through `redis.Redis` each command also takes a connection from the pool and gives it
        back, wraps itself in the retry policy and records metrics: the throttle's share of a
        reconcile's web CPU fell from 10 % to 4 % without them (py-spy on a gunicorn worker
        under load, 2026-12-02).

        On anything but a plain answer (the server not knowing the script yet, a dropped
        connection) the script runs through the client, whose retries apply, and the kept
        connection reconnects on its next use. A command whose answer timed out may have
        run: a request then counts twice, which errs towards throttling, as the client's own
        retry would.
        """
        connection = self._kept.connection_for(client.connection_pool)
        try:
            connection.send_command("EVALSHA", script.sha, len(keys), *keys, *args)
            return connection.read_response()
        except NoScriptError:
            pass
        except (RedisConnectionError, RedisTimeoutError, OSError):
            connection.disconnect()
        return script(keys=keys, args=args, client=client)


class _KeptConnection(threading.local):
    """One connection per thread (and process: a forked child must not share its parent's
    socket) taken from the pool and kept, for `SharedRedisCacheClient._script_run`."""

    def __init__(self) -> None:
        self.connection: AbstractConnection | None = None
        self.pool: ConnectionPool | None = None
        self.pid = 0

    def connection_for(self, pool: ConnectionPool) -> AbstractConnection:
        if self.connection is None or self.pool is not pool or self.pid != os.getpid():
            self.connection = pool.get_connection()
            self.pool, self.pid = pool, os.getpid()
        return self.connection


class RedisCache(django_redis.RedisCache):
    """Django's Redis cache on `SharedRedisCacheClient`."""

    def __init__(self, server: str | list[str], params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = SharedRedisCacheClient

    def count_window(self, current: str, previous: str, lifetime: int) -> tuple[int, int]:
        """Counter `current` plus one (a new one lives `lifetime` seconds) and the value of
        counter `previous` (0 when missing), in one round trip."""
        client: SharedRedisCacheClient = self._cache  # type: ignore[attr-defined]
        return client.count_window(
            self.make_and_validate_key(current),
            self.make_and_validate_key(previous),
            lifetime,
        )
