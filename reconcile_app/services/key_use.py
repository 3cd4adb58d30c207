"""When each API key was last used: noted in the cache on authentication, read by the
tokens page. Apart from the tokens service so that authentication (services/principals.py)
and the tokens service (which builds on principals) both reach it without a cycle."""

from __future__ import annotations

import time
from contextvars import ContextVar

from django.core.cache import cache
from django.utils import timezone

LAST_USE_CACHE_PREFIX = "reconcile:apikey-used:"
# A key's last use is noted at most once a minute per process: authentication is the API's
# hot path, and "last used" to the minute is what a person needs to spot a stale token.
LAST_USE_EVERY_SECONDS = 60.0
_last_noted: dict[str, float] = {}

# The key that opened this request, as (principal pk, key prefix); None for a session or
# outside a request. Set on authentication and cleared as each request starts (a thread
# serves many): a write checks that key again if access changed meanwhile (access_held).
key_in_use: ContextVar[tuple[int, str] | None] = ContextVar("reconcile_key_in_use", default=None)


def api_key_note_use(*, prefix: str) -> None:
    """Remember that the key was just used (in the cache, not the database: no write per
    request, and the configuration epoch does not move)."""
    now = time.monotonic()
    if now - _last_noted.get(prefix, float("-inf")) < LAST_USE_EVERY_SECONDS:
        return
    _last_noted[prefix] = now
    cache.set(f"{LAST_USE_CACHE_PREFIX}{prefix}", timezone.now().isoformat(), timeout=None)
