"""What the console's tables share: the table template and the cells several areas show."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from reconcile_app.templatetags.reconcile_tags import (
    jsonvalue,
)

TABLE_TEMPLATE = "reconcile_app/tables/console_table.html"


def snapshot_link(snapshot_id: str) -> SafeString:
    return format_html(
        '<a class="mono" href="{}" title="{}">{}</a>',
        reverse("console-snapshot", args=[snapshot_id]),
        snapshot_id,
        snapshot_id[:17] + "…",
    )


def side_by_side(value: Any, source: str, ref: str) -> SafeString:
    return format_html(
        '<div class="side"><span class="value">{}</span>'
        '<span class="side-source">{}</span><span class="side-ref mono">{}</span></div>',
        jsonvalue(value),
        source,
        ref,
    )
