"""Which cache the processes share (throttles, sign-in and key failure counters, heartbeats).

- `RECONCILE_CACHE_URL` set: that Redis.
- else, a `redis://` or `rediss://` broker: the same Redis server, on the database after the
  broker's (`/0` → `/1`, …, `/15` → `/0`, Redis having sixteen by default). Never the
  broker's own database: the cache may be cleared (FLUSHDB), and that must not drop queued
  tasks. So every host that shares the broker shares throttles and lockouts without another
  variable to set.
- else (the embedded filesystem broker, or another broker): a file cache under the var
  directory, which only processes on one host share.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from django.core.exceptions import ImproperlyConfigured

REDIS_SCHEMES = ("redis", "rediss")
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
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": location,
            }
        }
    return {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(var_dir / "cache"),
        }
    }
