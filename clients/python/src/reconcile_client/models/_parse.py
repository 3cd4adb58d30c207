"""Reading the API's JSON: times, dates, lists, and the client's own (non-wire) fields."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

from reconcile_client.errors import text_or_none

__all__ = ["OWN", "Json", "day", "instant", "owner_instant", "strs", "text_or_none"]

Json = Mapping[str, Any]


# Metadata of a field the client fills itself rather than reading a JSON property of that name.
OWN: Mapping[str, Any] = {"wire": False}


def instant(value: Any) -> datetime | None:
    if value is None:
        return None
    # Python 3.10's fromisoformat does not read the `Z` the API writes.
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def owner_instant(value: Any) -> datetime | None:
    """A time an owner system wrote in its own answer (a receipt's `committed_at`), which the
    server passes through unchecked: None when it is not an RFC 3339 time, as `.raw` keeps it."""
    if not isinstance(value, str):
        return None
    try:
        return instant(value)
    except ValueError:
        return None


def day(value: Any) -> date | None:
    return date.fromisoformat(str(value)) if value is not None else None


def strs(value: Any) -> tuple[str, ...]:
    return tuple(str(item) for item in value or ())
