"""Numbers beside the charts: rates as percentages, counts over the trials exposed."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django import template
from django.utils.dateparse import parse_datetime
from django.utils.html import format_html
from django.utils.safestring import SafeString

from reconcile_app.templatetags.reconcile_tags import duration

register = template.Library()


@register.filter
def pct(value: Any, places: int = 1) -> str:
    """A rate in [0, 1] as `43.2%`; a missing rate (nothing exposed) as a dash."""
    if value is None or value == "":
        return "—"
    return f"{float(value):.{int(places)}%}"


@register.filter
def seconds(value: float | None) -> str:
    """A duration in seconds, short: `6.8 ms` below a second, else as `duration` prints it."""
    if value is None:
        return "—"
    if abs(float(value)) < 1:
        return f"{float(value) * 1000:.1f} ms"
    return duration(value)


@register.filter
def instant(value: str | None) -> datetime | None:
    """An RFC 3339 string from the metrics (plain JSON) back to a datetime, for `{% ts %}`."""
    return parse_datetime(value) if value else None


@register.simple_tag
def of_exposed(cell: dict[str, Any]) -> SafeString:
    """`3 of 5 · 60%` — failures over the trials that exposed the arm to that failure."""
    if not cell.get("exposed"):
        return format_html('<span class="muted">{}</span>', "not exposed")
    return format_html(
        '<strong class="{}">{}</strong> of {} <span class="muted">· {}</span>',
        "bad" if cell.get("count") else "ok",
        cell.get("count", 0),
        cell["exposed"],
        pct(cell.get("rate"), 0),
    )
