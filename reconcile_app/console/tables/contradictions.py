"""The contradictions queue's table: both sides of each, and the resolve form for operators."""

from __future__ import annotations

from typing import Any

import django_tables2 as tables
from django.utils.html import format_html
from django.utils.safestring import SafeString

from reconcile_app.console.tables.bulk import pick_box, pick_column
from reconcile_app.console.tables.common import StableOrderTable, side_by_side, snapshot_link
from reconcile_app.models import Contradiction
from reconcile_app.templatetags.reconcile_tags import (
    badge,
    ts,
)


class ContradictionTable(StableOrderTable):
    """Both sides of each contradiction side by side; never merged into one value."""

    pick = pick_column()
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
            "pick",
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
        if not can_resolve:
            # Operators pick rows to resolve in bulk; nobody else has a use for the boxes.
            kwargs["exclude"] = (*kwargs.get("exclude", ()), "pick")
        super().__init__(*args, **kwargs)
        # Decided once per request by the view (operators only); the server checks it again.
        self.can_resolve = can_resolve
        # A refused resolve comes back with its message and the note as typed, in the row.
        self.errors = errors or {}
        self.drafts = drafts or {}

    def render_pick(self, record: Contradiction) -> SafeString:
        return pick_box("id", record.pk, f"contradiction {record.pk}")

    def render_detected_at(self, value: Any) -> SafeString:
        return ts(value)

    def render_kind(self, record: Contradiction) -> SafeString:
        return format_html('<span class="tag">{}</span>', record.kind.replace("_", " "))

    def render_field(self, value: str) -> SafeString:
        return format_html('<span class="mono">{}</span>', value)

    def render_state(self, record: Contradiction) -> SafeString:
        return side_by_side(record.state_value, record.state_source, record.state_ref)

    def render_other(self, record: Contradiction) -> SafeString:
        return side_by_side(record.other_value, record.other_source, record.other_ref)

    def render_snapshot(self, record: Contradiction) -> SafeString:
        return snapshot_link(record.snapshot.snapshot_id)

    def render_status(self, record: Contradiction) -> SafeString:
        return badge(record.status)
