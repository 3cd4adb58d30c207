"""Reading the API's JSON: times, dates, lists, and the client's own (non-wire) fields."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

Json = Mapping[str, Any]


# Metadata of a field the client fills itself rather than reading a JSON property of that name.
OWN: Mapping[str, Any] = {"wire": False}


def instant(value: Any) -> datetime | None:
    if value is None:
        return None
    # Python 3.10's fromisoformat does not read the `Z` the API writes.
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def day(value: Any) -> date | None:
    return date.fromisoformat(str(value)) if value is not None else None


def strs(value: Any) -> tuple[str, ...]:
    return tuple(str(item) for item in value or ())
