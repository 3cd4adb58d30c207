"""Points in time from callers, made safe for every database: aware, in UTC, in range.

Python accepts offsets up to ±23:59 and years from 1; PostgreSQL refuses offsets beyond
±15:59 ("time zone displacement out of range") and SQLite compares text. A fuzzer's
`issued_after=0808-10-11T11:51:23+18:13` reached PostgreSQL as-is and answered 500. Every
time taken from a query string or a form is normalised to UTC here first; one that cannot be
is refused with a clear message.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from django import forms
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django_filters import IsoDateTimeFilter
from django_filters.fields import IsoDateTimeField

from reconcile_app.errors import ValidationFailed

# How far ahead of this server's clock a caller's "now" may be (an attestation's observed_at,
# a quarantine's lookback start): machines' clocks drift apart.
FUTURE_TOLERANCE = timedelta(seconds=300)


def instant(moment: datetime) -> datetime:
    """`moment` in UTC (naive means UTC); ValueError when it is out of range."""
    if timezone.is_naive(moment):
        moment = timezone.make_aware(moment, UTC)
    try:
        moment = moment.astimezone(UTC)
    except OverflowError as exc:
        raise ValueError("the time is out of range") from exc
    return moment


def stored_instant(value: Any) -> datetime | None:
    """A time a snapshot's content holds as RFC 3339 text, parsed; None when absent."""
    return parse_datetime(value) if isinstance(value, str) and value else None


def instant_from_text(raw: str | None, name: str) -> datetime | None:
    """An RFC 3339 query parameter as a UTC datetime, None when absent, else a 400."""
    if raw is None or raw == "":
        return None
    try:
        if "T" not in raw.upper() and " " not in raw:
            # parse_datetime reads "2026-12-06" as its midnight; a question about a day is a
            # date parameter's (`on`), and midnight where was never said.
            raise ValueError("a date alone is no time: give the time and offset too")
        parsed = parse_datetime(raw)
        if parsed is None:
            raise ValueError("not an RFC 3339 time")
        return instant(parsed)
    except ValueError as exc:
        raise ValidationFailed(
            f"{name} must be an RFC 3339 time ({exc})", code="invalid_parameter"
        ) from exc


class InstantIsoFormField(IsoDateTimeField):
    """A filter's ISO 8601 value, normalised by `instant`, or invalid (400)."""

    def to_python(self, value: Any) -> datetime | None:
        result = super().to_python(value)
        if result is None:
            return None
        try:
            return instant(result)
        except ValueError as exc:
            raise forms.ValidationError(str(exc), code="invalid") from exc


class InstantFilter(IsoDateTimeFilter):
    """An ISO 8601 filter whose value reaches the database in UTC, or is refused (400)."""

    field_class = InstantIsoFormField
