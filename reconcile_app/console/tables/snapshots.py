"""The snapshot list's table."""

from __future__ import annotations

from typing import Any

import django_tables2 as tables
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from reconcile_app.console.tables.common import TABLE_TEMPLATE, StableOrderTable
from reconcile_app.models import DecisionSnapshot
from reconcile_app.selectors.snapshot_detail import verdict_counts
from reconcile_app.templatetags.reconcile_tags import (
    badge,
    badge_colour,
    ts,
)


class SnapshotTable(StableOrderTable):
    issued_at = tables.Column(verbose_name="Issued (UTC)")
    snapshot_id = tables.Column(verbose_name="Snapshot")
    decision_class = tables.Column(verbose_name="Decision class")
    subject = tables.Column(attrs={"td": {"class": "nowrap"}})
    principal = tables.Column(
        empty_values=(), orderable=False, accessor="content", verbose_name="Principal"
    )
    result = tables.Column()
    completeness = tables.Column()
    proposed_action = tables.Column(verbose_name="Proposed action")
    claims = tables.Column(
        empty_values=(), orderable=False, accessor="content", verbose_name="Claims"
    )

    class Meta:
        model = DecisionSnapshot
        fields = ()
        sequence = (
            "issued_at",
            "snapshot_id",
            "decision_class",
            "subject",
            "principal",
            "result",
            "completeness",
            "proposed_action",
            "claims",
        )
        template_name = TABLE_TEMPLATE
        attrs = {"class": "data-table", "id": "snapshots"}
        empty_text = "No snapshot matches these filters."
        order_by = ("-issued_at",)

    def render_issued_at(self, value: Any) -> SafeString:
        return ts(value)

    def render_snapshot_id(self, value: str) -> SafeString:
        return format_html(
            '<a class="mono" href="{}" title="{}">{}</a>',
            reverse("console-snapshot", args=[value]),
            value,
            value[:17] + "…" if len(value) > 18 else value,
        )

    def render_decision_class(self, value: str, record: DecisionSnapshot) -> SafeString:
        version = record.content.get("contract", {}).get("version", "")
        return format_html('{} <span class="version">v{}</span>', value, version)

    def render_principal(self, record: DecisionSnapshot) -> str:
        return str(record.content.get("binding", {}).get("principal", "—"))

    # Badges take the stored value, not the choice label tables2 would pass as `value`.
    def render_result(self, record: DecisionSnapshot) -> SafeString:
        return badge(record.result)

    def render_completeness(self, record: DecisionSnapshot) -> SafeString:
        return badge(record.completeness)

    def render_proposed_action(self, value: str) -> SafeString:
        return format_html('<span class="mono">{}</span>', value) if value else mark_safe("—")  # nosec B308

    def render_claims(self, record: DecisionSnapshot) -> SafeString:
        counts = verdict_counts(record.content)
        if not counts:
            return mark_safe('<span class="muted">none</span>')  # nosec B308
        return format_html_join(
            " ",
            '<span class="badge badge-{} badge-count" title="{}">{} {}</span>',
            (
                (badge_colour(verdict), verdict, count, verdict.replace("_", " "))
                for verdict, count in counts
            ),
        )
