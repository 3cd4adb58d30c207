"""Typed readers for the RECONCILE_* environment variables.

Every default serves the embedded mode; `production_checks` refuses insecure ones when
RECONCILE_PRODUCTION is on.
"""

from __future__ import annotations

import os
import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.core.exceptions import ImproperlyConfigured

PREFIX = "RECONCILE_"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _given(name: str) -> str | None:
    """The variable's value, None when unset or blank: set empty (a compose file passing an
    unset variable on), any kind keeps its default. `RECONCILE_SECURE_COOKIES=` must not turn
    a production default off, nor `RECONCILE_VAR_DIR=` put the database in the current
    directory, nor `RECONCILE_FALLBACK_OWNER=` route escalations to nobody."""
    raw = os.environ.get(PREFIX + name)
    return None if raw is None or raw.strip() == "" else raw


def env_str(name: str, default: str, *, empty_is_unset: bool = True) -> str:
    """A string, as given. A setting whose empty value must be refused rather than defaulted
    says so (`empty_is_unset=False`)."""
    raw = _given(name) if empty_is_unset else os.environ.get(PREFIX + name)
    return default if raw is None else raw


def env_bool(name: str, default: bool) -> bool:
    raw = _given(name)
    if raw is None:
        return default
    lowered = raw.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{PREFIX}{name} must be a boolean (1/0, true/false), got {raw!r}")


def env_int(
    name: str, default: int, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    raw = _given(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{PREFIX}{name} must be an integer, got {raw!r}") from exc
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{PREFIX}{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{PREFIX}{name} must be at most {maximum}, got {value}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    """Comma-separated items; none given (empty, or only commas) keeps the default
    (`RECONCILE_ALLOWED_HOSTS=` would otherwise allow no host: every request a 400)."""
    items = [item.strip() for item in (_given(name) or "").split(",") if item.strip()]
    return items or default


# DRF's spelling of a rate (rest_framework.throttling.SimpleRateThrottle.parse_rate): a count,
# then a period whose first letter is s, m, h or d ("1200/min", "5/s", "100/hour").
# A count of 0 would answer every request 429.
_RATE = re.compile(r"0*[1-9][0-9]*/[smhd][a-z]*")


def env_rate(name: str, default: str) -> str:
    """A throttle rate. Checked here because the throttle parses it on every request: a value
    it cannot parse would make every API request a 500 instead of refusing to start."""
    raw = _given(name)
    if raw is None:
        return default
    rate = raw.strip()
    if not _RATE.fullmatch(rate):
        raise ImproperlyConfigured(
            f"{PREFIX}{name} must be a rate: a count per s, min, hour or day, e.g. {default!r};"
            f" got {raw!r}"
        )
    return rate


def env_timezone(name: str, default: str) -> str:
    """An IANA timezone name, checked at start: code reading it builds a ZoneInfo on every
    request, and a name it cannot find would make each of those requests a 500."""
    raw = _given(name)
    if raw is None:
        return default
    name_given = raw.strip()
    try:
        ZoneInfo(name_given)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ImproperlyConfigured(
            f"{PREFIX}{name} must be an IANA timezone such as 'Europe/London', got {raw!r}"
        ) from exc
    return name_given


INSECURE_SECRET = "insecure-embedded-development-secret-change-me"


def production_checks(*, debug: bool, secret_key: str, allowed_hosts: list[str]) -> None:
    """Refuse to start rather than run a production deployment on development defaults."""
    if debug:
        raise ImproperlyConfigured("RECONCILE_PRODUCTION is on: set RECONCILE_DEBUG=0.")
    # Fewer than five distinct characters is Django's own test of a made-up key (W009).
    if secret_key == INSECURE_SECRET or len(secret_key) < 32 or len(set(secret_key)) < 5:
        raise ImproperlyConfigured(
            "RECONCILE_PRODUCTION is on: set RECONCILE_SECRET_KEY to 32+ random characters."
        )
    if "*" in allowed_hosts:
        # Any Host header would be taken: password-reset and absolute links built from it.
        raise ImproperlyConfigured(
            "RECONCILE_PRODUCTION is on: RECONCILE_ALLOWED_HOSTS must name the hosts, not '*'."
        )
