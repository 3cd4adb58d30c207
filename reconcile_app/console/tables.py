"""django-tables2 tables of the console. Cells render from the row itself: no per-row query."""

from __future__ import annotations

from typing import Any

import django_tables2 as tables
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from reconcile_app.models import Contradiction, DecisionSnapshot
from reconcile_app.selectors.console import verdict_counts
from reconcile_app.templatetags.reconcile_tags import badge, badge_colour, jsonvalue, ts

TABLE_TEMPLATE = "reconcile_app/tables/console_table.html"


class SnapshotTable(tables.Table):
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
        return format_html('<span class="mono">{}</span>', value) if value else mark_safe("—")

    def render_claims(self, record: DecisionSnapshot) -> SafeString:
        counts = verdict_counts(record.content)
        if not counts:
            return mark_safe('<span class="muted">none</span>')
        return format_html_join(
            " ",
            '<span class="badge badge-{} badge-count" title="{}">{} {}</span>',
            (
                (badge_colour(verdict), verdict, count, verdict.replace("_", " "))
                for verdict, count in counts
            ),
        )


class ContradictionTable(tables.Table):
    """Both sides of each contradiction side by side; never merged into one value."""

    detected_at = tables.Column(verbose_name="Detected (UTC)")
    kind = tables.Column()
    subject = tables.Column(attrs={"td": {"class": "nowrap"}})
    field = tables.Column()
    state = tables.Column(empty_values=(), orderable=False, verbose_name="State (owner)")
    other = tables.Column(empty_values=(), orderable=False, verbose_name="Other side")
    snapshot = tables.Column(orderable=False, verbose_name="Snapshot")
    status = tables.Column()
    resolution = tables.TemplateColumn(
        template_name="reconcile_app/partials/contradiction_resolution.html",
        orderable=False,
        empty_values=(),
        verbose_name="Resolution",
        extra_context=lambda table, record: {
            "can_resolve": table.can_resolve,
            "error": table.errors.get(record.pk, ""),
            "draft": table.drafts.get(record.pk, ""),
        },
    )

    class Meta:
        model = Contradiction
        fields = ()
        sequence = (
            "detected_at",
            "kind",
            "subject",
            "field",
            "state",
            "other",
            "snapshot",
            "status",
            "resolution",
        )
        template_name = "reconcile_app/tables/contradiction_table.html"
        attrs = {"class": "data-table", "id": "contradictions"}
        row_attrs = {"id": lambda record: f"contradiction-{record.pk}"}
        empty_text = "No contradiction matches these filters."
        order_by = ("-detected_at",)

    def __init__(
        self,
        *args: Any,
        can_resolve: bool = False,
        errors: dict[int, str] | None = None,
        drafts: dict[int, str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        # Decided once per request by the view (operators only); the server checks it again.
        self.can_resolve = can_resolve
        # A refused resolve comes back with its message and the note as typed, in the row.
        self.errors = errors or {}
        self.drafts = drafts or {}

    def render_detected_at(self, value: Any) -> SafeString:
        return ts(value)

    def render_kind(self, record: Contradiction) -> SafeString:
        return format_html('<span class="tag">{}</span>', record.kind.replace("_", " "))

    def render_field(self, value: str) -> SafeString:
        return format_html('<span class="mono">{}</span>', value)

    def render_state(self, record: Contradiction) -> SafeString:
        return _side(record.state_value, record.state_source, record.state_ref)

    def render_other(self, record: Contradiction) -> SafeString:
        return _side(record.other_value, record.other_source, record.other_ref)

    def render_snapshot(self, record: Contradiction) -> SafeString:
        snapshot_id = record.snapshot.snapshot_id
        return format_html(
            '<a class="mono" href="{}" title="{}">{}</a>',
            reverse("console-snapshot", args=[snapshot_id]),
            snapshot_id,
            snapshot_id[:17] + "…",
        )

    def render_status(self, record: Contradiction) -> SafeString:
        return badge(record.status)


def _side(value: Any, source: str, ref: str) -> SafeString:
    return format_html(
        '<div class="side"><span class="value">{}</span>'
        '<span class="side-source">{}</span><span class="side-ref mono">{}</span></div>',
        jsonvalue(value),
        source,
        ref,
    )
