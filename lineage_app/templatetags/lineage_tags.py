"""Template tags of lineage's pages (they load nothing of the host's)."""

from __future__ import annotations

from datetime import datetime

from django import template
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

# Constant markup, nothing from a request: safe to mark.
EMPTY = mark_safe('<span class="muted">—</span>')  # nosec B308


@register.simple_tag
def timestamp(value: datetime | None) -> SafeString:
    """A UTC time to the second, with the exact instant (RFC 3339, `Z`) in the tooltip."""
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
