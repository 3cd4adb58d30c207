"""Blast-radius lists: one django-tables2 table per kind to review.

Rows are `ReviewRow`s (a lineage node and the object it names, read for the whole page in one
query). A node whose object is not in this database (yet) still shows, with its id and label.
"""

from __future__ import annotations

from typing import Any

import django_tables2 as tables
from django.utils.html import format_html
from django.utils.safestring import SafeString

from reconcile_app.console.node_links import review_row_url
from reconcile_app.console.tables.common import TABLE_TEMPLATE, snapshot_link
from reconcile_app.selectors.blast_radius import ReviewRow
from reconcile_app.templatetags.reconcile_tags import EMPTY, badge, jsonvalue, short, ts


def _link(row: ReviewRow, text: str | None = None) -> SafeString:
    shown = text or row.ref
    return format_html(
        '<a class="mono" href="{}" title="{}">{}</a>', review_row_url(row), row.ref, shown
    )


def _field(row: ReviewRow, name: str) -> Any:
    return getattr(row.obj, name, None) if row.obj is not None else None


class ReviewTable(tables.Table):
    """Shared look: the console's table template, no sorting (rows come in lineage order)."""

    recorded_at = tables.Column(verbose_name="Recorded (UTC)", orderable=False)

    class Meta:
        template_name = TABLE_TEMPLATE
        orderable = False
        attrs = {"class": "data-table", "id": "blast-list"}
        row_attrs = {"data-node": lambda record: record.node_id}

    def render_recorded_at(self, record: ReviewRow) -> SafeString:
        return ts(record.recorded_at)


class SnapshotReviewTable(ReviewTable):
    ref = tables.Column(verbose_name="Snapshot")
    subject = tables.Column(empty_values=(), accessor="obj")
    decision_class = tables.Column(empty_values=(), accessor="obj", verbose_name="Decision class")
    result = tables.Column(empty_values=(), accessor="obj")
    taint = tables.Column(empty_values=(), accessor="obj", verbose_name="Review")

    class Meta(ReviewTable.Meta):
        sequence = ("ref", "recorded_at", "subject", "decision_class", "result", "taint")
        empty_text = "No snapshot downstream."

    def render_ref(self, record: ReviewRow) -> SafeString:
        return snapshot_link(record.ref)

    def render_subject(self, record: ReviewRow) -> Any:
        return format_html('<span class="mono">{}</span>', _field(record, "subject") or "—")

    def render_decision_class(self, record: ReviewRow) -> Any:
        return _field(record, "decision_class") or EMPTY

    def render_result(self, record: ReviewRow) -> SafeString:
        return badge(_field(record, "result"))

    def render_taint(self, record: ReviewRow) -> SafeString:
        if record.tainted:
            return badge("tainted", title="downstream of this correction: replay it corrected")
        return EMPTY


class DecisionReviewTable(ReviewTable):
    ref = tables.Column(verbose_name="Decision")
    result = tables.Column(empty_values=(), accessor="obj")
    proposed_action = tables.Column(empty_values=(), accessor="obj", verbose_name="Proposed")
    snapshot = tables.Column(empty_values=(), accessor="obj", verbose_name="Made on")

    class Meta(ReviewTable.Meta):
        sequence = ("ref", "recorded_at", "result", "proposed_action", "snapshot")
        empty_text = "No decision downstream."

    def render_ref(self, record: ReviewRow) -> SafeString:
        return _link(record, short(record.ref, 20))

    def render_result(self, record: ReviewRow) -> SafeString:
        return badge(_field(record, "result"))

    def render_proposed_action(self, record: ReviewRow) -> SafeString:
        return format_html('<span class="mono">{}</span>', _field(record, "proposed_action") or "—")

    def render_snapshot(self, record: ReviewRow) -> SafeString:
        snapshot = _field(record, "snapshot")
        return snapshot_link(snapshot.snapshot_id) if snapshot is not None else EMPTY


class EffectReviewTable(ReviewTable):
    ref = tables.Column(verbose_name="Effect")
    action = tables.Column(empty_values=(), accessor="obj")
    subject = tables.Column(empty_values=(), accessor="obj")
    source = tables.Column(empty_values=(), accessor="obj")
    status = tables.Column(empty_values=(), accessor="obj")

    class Meta(ReviewTable.Meta):
        sequence = ("ref", "recorded_at", "action", "subject", "source", "status")
        empty_text = "No effect downstream."

    def render_ref(self, record: ReviewRow) -> SafeString:
        return _link(record)

    def render_action(self, record: ReviewRow) -> SafeString:
        return format_html('<span class="mono">{}</span>', _field(record, "action") or record.label)

    def render_subject(self, record: ReviewRow) -> Any:
        return _field(record, "subject") or EMPTY

    def render_source(self, record: ReviewRow) -> Any:
        source = _field(record, "source")
        return source.name if source is not None else EMPTY

    def render_status(self, record: ReviewRow) -> SafeString:
        return badge(_field(record, "status"))


class MemoryReviewTable(ReviewTable):
    ref = tables.Column(verbose_name="Memory")
    memory_class = tables.Column(empty_values=(), accessor="obj", verbose_name="Class")
    subject = tables.Column(empty_values=(), accessor="obj")
    value = tables.Column(empty_values=(), accessor="obj", verbose_name="Field = value")
    fact_key = tables.Column(empty_values=(), accessor="obj", verbose_name="Fact key")
    status = tables.Column(empty_values=(), accessor="obj")

    class Meta(ReviewTable.Meta):
        sequence = ("ref", "recorded_at", "memory_class", "subject", "value", "fact_key", "status")
        empty_text = "No memory downstream."

    def render_ref(self, record: ReviewRow) -> SafeString:
        return _link(record)

    def render_memory_class(self, record: ReviewRow) -> Any:
        return _field(record, "memory_class") or EMPTY

    def render_subject(self, record: ReviewRow) -> Any:
        return _field(record, "subject") or EMPTY

    def render_value(self, record: ReviewRow) -> SafeString:
        if record.obj is None:
            return format_html('<span class="muted">{}</span>', record.label or "—")
        return format_html(
            '<span class="mono">{}</span> = <span class="value">{}</span>',
            record.obj.field or "—",
            jsonvalue(record.obj.value),
        )

    def render_fact_key(self, record: ReviewRow) -> Any:
        fact_key = _field(record, "fact_key")
        return format_html('<span class="mono">{}</span>', fact_key) if fact_key else EMPTY

    def render_status(self, record: ReviewRow) -> SafeString:
        return badge(_field(record, "status"))


REVIEW_TABLES: dict[str, type[ReviewTable]] = {
    "snapshot": SnapshotReviewTable,
    "decision": DecisionReviewTable,
    "effect": EffectReviewTable,
    "memory": MemoryReviewTable,
}
