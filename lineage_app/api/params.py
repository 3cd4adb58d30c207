"""Query parameters of the lineage API, checked, and times written back out.

Times follow RFC 3339 both ways: a time read from a query string reaches the database in UTC
or is refused (PostgreSQL refuses offsets beyond ±15:59, and SQLite compares text), and a time
written out is UTC with a `Z`, microseconds kept so a stored time round-trips to the same
string.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_datetime
from rest_framework.request import Request

from lineage_app.api.exceptions import InvalidParameter
from lineage_app.selectors.reach import MAX_DEPTH

PAGE_SIZE, MAX_PAGE_SIZE = 100, 1000


def rfc3339(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def instant_param(request: Request, name: str) -> datetime | None:
    """An RFC 3339 query parameter as a UTC datetime, None when absent, else a 400."""
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return None
    try:
        parsed = parse_datetime(raw)
        if parsed is None:
            raise ValueError("not an RFC 3339 time")
        if timezone.is_naive(parsed):
            parsed = timezone.make_aware(parsed, UTC)
        try:
            return parsed.astimezone(UTC)
        except OverflowError as exc:
            raise ValueError("the time is out of range") from exc
    except ValueError as exc:
        raise InvalidParameter(f"{name} must be an RFC 3339 time ({exc})") from exc


def int_param(request: Request, name: str, default: int | None, low: int, high: int) -> int | None:
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)  # type: ignore[arg-type]  # not None: checked above
    except ValueError as exc:
        raise InvalidParameter(f"{name} must be an integer") from exc
    if not low <= value <= high:
        raise InvalidParameter(f"{name} must be between {low} and {high}")
    return value


def walk_options(request: Request) -> dict[str, Any]:
    """Depth, time cut-off, kinds and the page asked for, shared by every walk."""
    as_of = instant_param(request, "as_of")
    page = int_param(request, "page", 1, 1, 10**6) or 1
    page_size = int_param(request, "page_size", PAGE_SIZE, 1, MAX_PAGE_SIZE) or PAGE_SIZE
    return {
        "depth": int_param(request, "depth", None, 1, MAX_DEPTH),
        "as_of": as_of,
        "kinds": request.query_params.getlist("kind") or None,
        "limit": page_size,
        "offset": (page - 1) * page_size,
        "page": page,
        "page_size": page_size,
    }
