"""The audit trail's table, and the object links and before/after cells it shows."""

from __future__ import annotations

from typing import Any

import django_tables2 as tables
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from reconcile_app.console.tables.common import StableOrderTable
from reconcile_app.models import AuditEvent
from reconcile_app.selectors.audit import (
    audit_changes,
)
from reconcile_app.templatetags.reconcile_tags import EMPTY, jsonvalue, short, ts

# Object kinds with a page of their own: the audit row links to it. (Contradictions, principals
# and users have none in the console: their rows name them.)
OBJECT_PAGES = {
    "drill_run": "console-drill",
    "effect": "console-effect",
    "escalation": "console-escalation",
    "evidence": "console-evidence",
    "fact": "console-fact",
    "job": "console-job",
    "memory": "console-memory",
    "snapshot": "console-snapshot",
}


def _page_of(kind: str, ref: str) -> str | None:
    if kind in OBJECT_PAGES:
        try:
            return reverse(OBJECT_PAGES[kind], args=[ref])
        except NoReverseMatch:  # a ref its page cannot take (a drill run's is a number)
            return None
    if kind == "quarantine":
        return f"{reverse('console-quarantine')}#quarantine-{ref}"
    if kind == "contract":
        # Contracts are audited as "decision_class@version" (Contract.__str__).
        decision_class, at, version = ref.partition("@")
        if at and decision_class and version:
            return reverse("console-contract", args=[decision_class, version])
    return None


def object_link(kind: str, ref: str, after: Any = None) -> SafeString:
    """The audited object, linked to its page; a correction (audited on the evidence it
    corrects) links its own page beside it."""
    page = _page_of(kind, ref)
    shown = (
        format_html('<a class="mono" href="{}">{}</a>', page, ref)
        if page
        else format_html('<span class="mono">{}</span>', ref)
    )
    correction_id = after.get("correction_id") if isinstance(after, dict) else None
    if kind == "evidence" and isinstance(correction_id, str) and correction_id:
        return format_html(
            '{} <a class="mono" href="{}">{}</a>',
            shown,
            reverse("console-correction", args=[correction_id]),
            correction_id,
        )
    return shown


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


class AuditTable(StableOrderTable):
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
        return object_link(record.object_kind, record.object_ref, record.after)

    def render_change(self, record: AuditEvent) -> SafeString:
        return changes_html(record.before, record.after)

    def render_request_id(self, value: str) -> SafeString:
        return format_html('<span class="mono" title="{}">{}</span>', value, short(value, 12))
