"""The audit trail's table, and the object links and before/after cells it shows."""

from __future__ import annotations

from typing import Any

import django_tables2 as tables
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from reconcile_app.models import AuditEvent
from reconcile_app.selectors.audit import (
    audit_changes,
)
from reconcile_app.templatetags.reconcile_tags import EMPTY, jsonvalue, short, ts

# Object kinds with a page of their own: the audit row links to it.
OBJECT_PAGES = {
    "effect": "console-effect",
    "escalation": "console-escalation",
    "memory": "console-memory",
    "snapshot": "console-snapshot",
}


def object_link(kind: str, ref: str) -> SafeString:
    if kind in OBJECT_PAGES:
        return format_html(
            '<a class="mono" href="{}">{}</a>', reverse(OBJECT_PAGES[kind], args=[ref]), ref
        )
    if kind == "quarantine":
        return format_html(
            '<a class="mono" href="{}#quarantine-{}">{}</a>',
            reverse("console-quarantine"),
            ref,
            ref,
        )
    return format_html('<span class="mono">{}</span>', ref)


def changes_html(before: Any, after: Any) -> SafeString:
    changes = audit_changes(before, after)
    if not changes:
        return EMPTY
    return format_html_join(
        "",
        '<span class="pair change"><span class="muted">{}</span> {}</span>',
        (
            (
                change.name.replace("_", " "),
                format_html(
                    "{}", jsonvalue(change.after) if change.added else jsonvalue(change.before)
                )
                if change.added or change.removed or change.kept
                else format_html(
                    '<span class="before">{}</span> → <span class="after">{}</span>',
                    jsonvalue(change.before) or "—",
                    jsonvalue(change.after) or "—",
                ),
            )
            for change in changes
        ),
    )


class AuditTable(tables.Table):
    at = tables.Column(verbose_name="At (UTC)")
    actor_name = tables.Column(verbose_name="Actor", attrs={"td": {"class": "nowrap"}})
    action = tables.Column()
    object_kind = tables.Column(verbose_name="Kind")
    object_ref = tables.Column(verbose_name="Object")
    reason = tables.Column(orderable=False, attrs={"td": {"class": "reason-cell"}})
    change = tables.Column(
        empty_values=(),
        orderable=False,
        verbose_name="Before → after",
        attrs={"td": {"class": "change-cell"}},
    )
    request_id = tables.Column(orderable=False, verbose_name="Request id")

    class Meta:
        model = AuditEvent
        fields = ()
        sequence = (
            "at",
            "actor_name",
            "action",
            "object_kind",
            "object_ref",
            "reason",
            "change",
            "request_id",
        )
        template_name = "reconcile_app/tables/console_table.html"
        attrs = {"class": "data-table", "id": "audit"}
        row_attrs = {"id": lambda record: f"audit-{record.pk}"}
        empty_text = "No recorded action matches these filters."
        order_by = ("-at",)

    def render_at(self, value: Any) -> SafeString:
        return ts(value)

    def render_action(self, value: str) -> SafeString:
        return format_html('<span class="tag mono">{}</span>', value)

    def render_object_kind(self, value: str) -> SafeString:
        return format_html('<span class="tag">{}</span>', value)

    def render_object_ref(self, record: AuditEvent) -> SafeString:
        return object_link(record.object_kind, record.object_ref)

    def render_change(self, record: AuditEvent) -> SafeString:
        return changes_html(record.before, record.after)

    def render_request_id(self, value: str) -> SafeString:
        return format_html('<span class="mono" title="{}">{}</span>', value, short(value, 12))
