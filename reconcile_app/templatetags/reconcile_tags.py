"""Presentation helpers for the console: badges, values, times and durations.

Badge colours come from `BADGE_COLOURS` only, so a value looks the same on every page.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from django import template
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from reconcile_app.choices import BADGE_COLOURS

register = template.Library()

NEUTRAL = "grey"
EMPTY = mark_safe('<span class="muted">—</span>')


@register.filter
def badge_colour(value: Any) -> str:
    return BADGE_COLOURS.get(str(value), NEUTRAL)


@register.simple_tag
def badge(value: Any, label: Any = None, title: str = "") -> SafeString:
    """A badge coloured by `value`; `label` shows other text in the same colour."""
    if value is None or value == "":
        return EMPTY
    text = str(value if label is None else label).replace("_", " ")
    if title:
        return format_html(
            '<span class="badge badge-{}" title="{}">{}</span>', badge_colour(value), title, text
        )
    return format_html('<span class="badge badge-{}">{}</span>', badge_colour(value), text)


@register.filter
def jsonvalue(value: Any) -> str:
    """A state or claim value as compact text: strings bare, everything else as JSON."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ": "))


@register.filter
def duration(seconds: float | int | None) -> str:
    """Seconds as `1h 02m`, `4m 05s` or `12.3s`; negative ages (clock skew) keep their sign."""
    if seconds is None:
        return "—"
    sign = "-" if seconds < 0 else ""
    seconds = abs(float(seconds))
    if seconds < 60:
        return f"{sign}{seconds:.1f}s" if seconds < 10 else f"{sign}{seconds:.0f}s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{sign}{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{sign}{hours}h {minutes:02d}m"
    days, hours = divmod(hours, 24)
    return f"{sign}{days}d {hours:02d}h"


@register.simple_tag
def ts(value: datetime | None) -> SafeString:
    """A UTC timestamp to the second, with the exact instant in the tooltip."""
    if value is None:
        return EMPTY
    value = timezone.localtime(value, timezone.get_fixed_timezone(0))
    exact = value.isoformat().replace("+00:00", "Z")
    return format_html(
        '<time datetime="{}" title="{}">{}</time>',
        exact,
        exact,
        value.strftime("%Y-%m-%d %H:%M:%S"),
    )


@register.filter
def short(value: Any, length: int = 12) -> str:
    """A prefix of a hash or id; the full value goes in a title attribute beside it."""
    text = str(value or "")
    return text if len(text) <= length else f"{text[:length]}…"


@register.filter
def humanise(value: Any) -> str:
    return str(value or "").replace("_", " ")
