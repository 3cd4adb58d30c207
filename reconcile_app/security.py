"""Security headers, a content security policy with per-request nonces, and throttles.

The console's own assets satisfy the policy: scripts only from this origin or carrying the
request's nonce (for the few inline initialisations), styles from this origin (inline
style attributes are allowed because Plotly and htmx set them), no framing, no plugins.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable

from django.conf import settings
from django.core.cache import BaseCache, cache
from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_cache_control
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

CSP = (
    "default-src 'self'; "
    "script-src 'self' 'nonce-{nonce}'; "
    "style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; "
    "font-src 'self' data:; "
    "connect-src 'self'; "
    "object-src 'none'; "
    "base-uri 'self'; "
    "form-action 'self'; "
    "frame-ancestors 'none'"
)


class SecurityHeadersMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        nonce = secrets.token_urlsafe(16)
        request.csp_nonce = nonce  # type: ignore[attr-defined]
        response = self.get_response(request)
        response.setdefault("Content-Security-Policy", CSP.format(nonce=nonce))
        response.setdefault("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
        response.setdefault("Cross-Origin-Opener-Policy", "same-origin")
        if not response.has_header("Cache-Control") and _carries_credentials(request):
            # What is read signed in is the reader's: kept by no shared cache, and not by the
            # browser either, whose back button showed audit pages after signing out on a
            # shared workstation. Answers that set their own (static files) keep theirs.
            patch_cache_control(response, private=True, no_store=True)
        return response


def _carries_credentials(request: HttpRequest) -> bool:
    """A session cookie or an Authorization header: read from the request itself, as asking
    `request.user` could cost a session query on a page that never needed one."""
    return settings.SESSION_COOKIE_NAME in request.COOKIES or "HTTP_AUTHORIZATION" in request.META


def csp_nonce(request: HttpRequest) -> dict[str, str]:
    """Template context: `{{ csp_nonce }}` for the few inline scripts."""
    return {"csp_nonce": getattr(request, "csp_nonce", "")}


def client_address(request: HttpRequest | Request) -> str:
    """The client's address, as every throttle and failure counter counts it.

    DRF's NUM_PROXIES semantics with N = RECONCILE_TRUSTED_PROXY_COUNT: each trusted proxy
    appends the address it was connected from to X-Forwarded-For, so the N-th entry from the
    right is the last one a trusted party wrote; everything left of it is whatever the client
    sent. With N = 0 the header is ignored: without a proxy in front, any client can forge it
    and would choose a fresh address for every guess.
    """
    remote = str(request.META.get("REMOTE_ADDR") or "unknown")
    trusted_proxies: int = settings.RECONCILE_TRUSTED_PROXY_COUNT
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR")
    if trusted_proxies <= 0 or not forwarded:
        return remote
    hops = str(forwarded).split(",")
    hop = hops[-min(trusted_proxies, len(hops))].strip()
    # An empty hop is a proxy that wrote nothing: fall back to the one that connected.
    return hop or remote


class PrincipalRateThrottle(SimpleRateThrottle):
    """Requests per principal (an API key or a person), whatever process serves them.

    DRF's own throttle keeps a log of every request time in the window and rewrites it on
    every request: its cost grows with the rate. This one keeps a counter per fixed window
    (an int, O(1) per request) and estimates the sliding window from the current and the
    previous counters, weighting the previous by how much of it still lies inside the
    sliding window (as if its requests were spread evenly). A refused request is not counted,
    as in DRF: a client that backs off gets through when the window has moved on.
    """

    scope = "principal"
    # Seconds until the refused request would be admitted, for Retry-After.
    retry_in: float | None = None
    num_requests: int  # set by SimpleRateThrottle from the rate
    duration: int

    def get_ident(self, request: HttpRequest | Request) -> str:
        return client_address(request)

    def get_cache_key(self, request: HttpRequest, view: object) -> str | None:
        if _anonymous(request):
            return self.cache_format % {"scope": "anon", "ident": self.get_ident(request)}
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}

    def allow_request(self, request: Request, view: object) -> bool:  # type: ignore[override]
        # Callers without credentials (the API schema is open to them) count per address
        # at the anonymous rate, not at a principal's.
        anonymous = _anonymous(request)
        rate = self.THROTTLE_RATES.get("anon") if anonymous else self.rate
        if rate is None:
            return True
        key = self.get_cache_key(request, view)  # type: ignore[arg-type]
        if key is None:
            return True
        limit, duration = self.num_requests, self.duration
        if anonymous:
            limit, duration = self.parse_rate(rate)  # type: ignore[assignment]
        window, elapsed = divmod(self.timer(), duration)
        current_key = f"{key}:{int(window)}"
        # Counted first, so concurrent requests in other processes each see their own
        # count: the current window never admits more than the limit.
        count, previous = _window_counts(
            self.cache, current_key, f"{key}:{int(window) - 1}", lifetime=2 * duration
        )
        if count <= limit and previous * (1 - elapsed / duration) + count <= limit:
            return True
        _counter_decrement(self.cache, current_key, lifetime=2 * duration)
        self.retry_in = _retry_in(
            limit=limit, duration=duration, elapsed=elapsed, previous=previous, current=count - 1
        )
        return False

    def wait(self) -> float | None:
        return self.retry_in


def _anonymous(request: HttpRequest | Request) -> bool:
    user = getattr(request, "user", None)
    return user is None or not user.is_authenticated


def _window_counts(
    cache: BaseCache, current_key: str, previous_key: str, *, lifetime: int
) -> tuple[int, int]:
    """This window's counter plus one, and the previous window's count: one round trip on
    the Redis cache (`RedisCache.count_window`), three or four on the file cache."""
    count_window = getattr(cache, "count_window", None)
    if count_window is not None:
        counts: tuple[int, int] = count_window(current_key, previous_key, lifetime)
        return counts
    count = _counter_increment(cache, current_key, lifetime=lifetime)
    return count, int(cache.get(previous_key, 0))


def _counter_increment(cache: BaseCache, key: str, *, lifetime: int) -> int:
    """The counter plus one; a missing counter starts at 1 and lives `lifetime` seconds."""
    try:
        count = int(cache.incr(key))
    except ValueError:
        if cache.add(key, 1, lifetime):
            return 1
        count = int(cache.incr(key))  # another process started it first
    # Django's own file cache's incr resets the expiry to the cache's default (Redis and
    # config.file_cache keep it): a window longer than that default would lose its count
    # while still being read.
    if lifetime > (cache.default_timeout or 0):
        cache.touch(key, lifetime)
    return count


def _counter_decrement(cache: BaseCache, key: str, *, lifetime: int) -> None:
    """Undo an increment, keeping the counter's lifetime (see `_counter_increment`)."""
    try:
        cache.decr(key)
    except ValueError:
        return  # a counter expired or cleared meanwhile has nothing to undo
    if lifetime > (cache.default_timeout or 0):
        cache.touch(key, lifetime)


def _retry_in(*, limit: int, duration: int, elapsed: float, previous: int, current: int) -> float:
    """Seconds until one more request fits the sliding estimate, if no other arrives."""
    if limit <= 0:
        return float(duration)
    if current < limit and previous > 0:
        # Within this window: once previous * (1 - f) + current + 1 <= limit.
        fraction = 1 - (limit - current - 1) / previous
        return max(fraction * duration - elapsed, 0.001)
    # In the next window, where this window's count is the one that fades out.
    fraction = max(0.0, 1 - (limit - 1) / current) if current else 0.0
    return duration - elapsed + fraction * duration


FAILURE_WINDOW_SECONDS = 15 * 60


def failures_key(kind: str, ident: str) -> str:
    # Hashed: a username or address is caller-chosen text, and cache keys must stay short
    # and free of spaces and control characters on every backend.
    digest = hashlib.sha256(ident.encode("utf-8")).hexdigest()[:32]
    return f"reconcile:failures:{kind}:{digest}"


def failure_count(kind: str, ident: str) -> int:
    return int(cache.get(failures_key(kind, ident), 0))


def failure_record(kind: str, ident: str) -> int:
    """Count one failure; the count lives FAILURE_WINDOW_SECONDS after the latest failure."""
    key = failures_key(kind, ident)
    # Started with `add`: of two first failures at once, one starts the count and the other
    # adds to it (a `set` here made both write 1).
    count = _counter_increment(cache, key, lifetime=FAILURE_WINDOW_SECONDS)
    # The window runs from the latest failure (incr keeps the first one's expiry), so the
    # Retry-After derived from it is the same on every deployment.
    cache.touch(key, FAILURE_WINDOW_SECONDS)
    return count


def failures_clear(kind: str, ident: str) -> None:
    cache.delete(failures_key(kind, ident))


def failure_limit(kind: str) -> int:
    limits: dict[str, int] = settings.RECONCILE_FAILURE_LIMITS
    return limits[kind]
