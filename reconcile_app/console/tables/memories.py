"""The memory classes page's table: each declared class with its kind's rules, its memories
by status, its quarantine and where its blast radius is listed.

Cells render from the rows the selector built (counts and quarantines in two queries for the
whole page): no per-row query.
"""

from __future__ import annotations

from urllib.parse import urlencode

import django_tables2 as tables
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from reconcile_app.choices import MemoryKind, MemoryStatus
from reconcile_app.console.tables.common import TABLE_TEMPLATE
from reconcile_app.selectors.memory_classes import MemoryClassView
from reconcile_app.templatetags.reconcile_tags import badge, ts


def promotions_url(memory_class: str) -> str:
    return f"{reverse('console-promotions')}?{urlencode({'memory_class': memory_class})}"


class MemoryClassTable(tables.Table):
    """Not paginated: a deployment declares a handful of classes, all shown at once."""

    name = tables.Column(accessor="memory_class__name", verbose_name="Class", orderable=False)
    kind = tables.Column(accessor="memory_class__kind", verbose_name="Kind", orderable=False)
    owner = tables.Column(accessor="memory_class__owner", verbose_name="Owner", orderable=False)
    ttl = tables.Column(
        accessor="memory_class__default_ttl_days",
        verbose_name="Default TTL",
        orderable=False,
        empty_values=(),
        attrs={"td": {"class": "nowrap"}},
    )
    admission = tables.Column(
        accessor="memory_class__admission", verbose_name="Admission", orderable=False
    )
    retirement = tables.Column(verbose_name="Retires", orderable=False)
    memories = tables.Column(empty_values=(), verbose_name="Memories by status", orderable=False)
    quarantine = tables.Column(empty_values=(), verbose_name="Quarantine", orderable=False)
    lineage = tables.Column(empty_values=(), verbose_name="Lineage", orderable=False)

    class Meta:
        template_name = TABLE_TEMPLATE
        attrs = {"class": "data-table", "id": "memory-classes"}
        row_attrs = {"id": lambda record: f"class-{record.name}"}
        empty_text = "No memory class is declared: load memory class files with load_contracts."

    def render_name(self, record: MemoryClassView) -> SafeString:
        description = record.memory_class.description
        return format_html(
            '<span class="mono"><strong>{}</strong></span>{}',
            record.name,
            format_html('<div class="cell-note">{}</div>', description) if description else "",
        )

    def render_kind(self, value: str) -> SafeString:
        return format_html('<span class="tag">{}</span>', value)

    def render_ttl(self, record: MemoryClassView) -> SafeString:
        days = record.memory_class.default_ttl_days
        if record.memory_class.kind == MemoryKind.FACT:
            return mark_safe('<span class="muted">own valid_until</span>')  # nosec B308
        if not record.expires_by_date:
            return mark_safe('<span class="muted">never by date</span>')  # nosec B308
        if days is None:
            return mark_safe('<span class="muted">none</span>')  # nosec B308
        return format_html("{} day{}", days, "" if days == 1 else "s")

    def render_admission(self, value: str) -> SafeString:
        if value == "review":
            return format_html(
                '{} <span class="muted">by a reviewer other than the writer</span>',
                badge("suggested", label="review"),
            )
        return format_html('<span class="muted">{}</span>', value)

    def render_memories(self, record: MemoryClassView) -> SafeString:
        shown = [(status, n) for status, n in record.counts.items() if n]
        if not shown:
            return mark_safe('<span class="muted">none</span>')  # nosec B308
        parts = []
        for status, n in shown:
            pair = format_html(
                '<span class="pair status-count nowrap" data-status="{}">{} {}</span>',
                status,
                badge(status),
                n,
            )
            if status == MemoryStatus.SUGGESTED:
                # Suggestions wait in the reviewers' queue: open it on this class.
                pair = format_html(
                    '<a href="{}" title="awaiting promotion">{}</a>',
                    promotions_url(record.name),
                    pair,
                )
            parts.append((pair,))
        return format_html_join(" ", "{}", parts)

    def render_quarantine(self, record: MemoryClassView) -> SafeString:
        quarantine = record.quarantine
        if quarantine is None:
            return mark_safe('<span class="muted">trusted</span>')  # nosec B308
        return format_html(
            '{} <span class="muted">since {}</span> <a href="{}">{}</a>',
            badge("quarantined", title=quarantine.reason),
            ts(quarantine.created_at),
            reverse("console-quarantine"),
            quarantine.quarantine_id,
        )

    def render_lineage(self, record: MemoryClassView) -> SafeString:
        url = f"{reverse('console-blast-radius')}?{urlencode({'memory_class': record.name})}"
        return format_html('<a class="nowrap" href="{}">blast radius</a>', url)
