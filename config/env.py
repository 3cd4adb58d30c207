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


def env_str(name: str, default: str, *, empty_is_unset: bool = True) -> str:
    """A string; empty (or only spaces) is unset, as for every other kind: `RECONCILE_VAR_DIR=`
    from a compose file would otherwise put the database in the current directory and
    `RECONCILE_FALLBACK_OWNER=` route escalations to nobody. A setting whose empty value
    must be refused rather than defaulted says so (`empty_is_unset=False`)."""
    raw = os.environ.get(PREFIX + name)
    if raw is None or (empty_is_unset and raw.strip() == ""):
        return default
    return raw


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(PREFIX + name)
    # Empty is unset, as for integers: `RECONCILE_SECURE_COOKIES=` (a compose file passing
    # an unset variable on) must not turn a production default off.
    if raw is None or raw.strip() == "":
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
    raw = os.environ.get(PREFIX + name)
    if raw is None or raw.strip() == "":
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
    raw = os.environ.get(PREFIX + name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


# DRF's spelling of a rate (rest_framework.throttling.SimpleRateThrottle.parse_rate): a count,
# then a period whose first letter is s, m, h or d ("1200/min", "5/s", "100/hour").
# A count of 0 would answer every request 429.
_RATE = re.compile(r"0*[1-9][0-9]*/[smhd][a-z]*")


def env_rate(name: str, default: str) -> str:
    """A throttle rate. Checked here because the throttle parses it on every request: a value
    it cannot parse would make every API request a 500 instead of refusing to start."""
    raw = os.environ.get(PREFIX + name)
    if raw is None or raw.strip() == "":
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
    raw = os.environ.get(PREFIX + name)
    if raw is None or raw.strip() == "":
        return default
    name_given = raw.strip()
    try:
        ZoneInfo(name_given)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ImproperlyConfigured(
            f"{PREFIX}{name} must be an IANA timezone such as 'Europe/London', got {raw!r}"
        ) from exc
    return name_given
