"""The reviewers' promotion queue: one row per suggested memory awaiting (or given) a
reviewer's decision, with what it says, what it derives from and what it would supersede.

The decision itself is made on the memory's page (the whole record in view, with a
rationale); the queue says, per row, whether the person looking may make it and why not.
"""

from __future__ import annotations

from typing import Any

import django_tables2 as tables
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from reconcile_app.choices import EscalationStatus
from reconcile_app.console.node_links import memory_url, node_url
from reconcile_app.console.tables.common import TABLE_TEMPLATE, StableOrderTable
from reconcile_app.models import Escalation, MemoryRecord
from reconcile_app.services.references import split_reference
from reconcile_app.templatetags.reconcile_tags import EMPTY, age, badge, jsonvalue, ts


def memory_link(memory_id: str) -> SafeString:
    return format_html('<a class="mono" href="{}">{}</a>', memory_url(memory_id), memory_id)


def reference_links(references: list[str]) -> SafeString:
    if not references:
        return EMPTY
    return format_html_join(
        " ",
        '<a class="tag mono" href="{}">{}</a>',
        ((node_url(*split_reference(reference)), reference) for reference in references),
    )


def _memory(record: Escalation) -> MemoryRecord:
    """The memory a promotion asks about (the queue's query keeps those with one only)."""
    if record.memory is None:
        raise ValueError(f"{record.escalation_id} is not a promotion")
    return record.memory


class PromotionTable(StableOrderTable):
    """Rows arrive in queue order (the view orders them by tab)."""

    age = tables.Column(
        accessor="opened_at",
        verbose_name="Age",
        order_by=("-opened_at",),
        attrs={"td": {"class": "nowrap num"}},
    )
    memory = tables.Column(accessor="memory__memory_id", verbose_name="Memory")
    memory_class = tables.Column(accessor="memory__memory_class", verbose_name="Class")
    writer = tables.Column(
        accessor="requested_by__name", verbose_name="Written by", order_by=("requested_by__name",)
    )
    says = tables.Column(empty_values=(), orderable=False, verbose_name="Subject · field = value")
    derived_from = tables.Column(empty_values=(), orderable=False, verbose_name="Derived from")
    supersedes = tables.Column(empty_values=(), orderable=False, verbose_name="Would supersede")
    owner = tables.Column(attrs={"td": {"class": "nowrap"}})
    status = tables.Column()
    review = tables.Column(empty_values=(), orderable=False, verbose_name="Review")

    class Meta:
        model = Escalation
        fields = ()
        sequence = (
            "age",
            "memory",
            "memory_class",
            "writer",
            "says",
            "derived_from",
            "supersedes",
            "owner",
            "status",
            "review",
        )
        template_name = TABLE_TEMPLATE
        attrs = {"class": "data-table", "id": "promotions"}
        row_attrs = {"id": lambda record: f"promotion-{record.escalation_id}"}
        empty_text = "No promotion matches these filters."

    def __init__(self, *args: Any, viewer: Any = None, is_reviewer: bool = False, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.viewer_pk = getattr(viewer, "pk", None)
        self.is_reviewer = is_reviewer

    def render_age(self, record: Escalation) -> SafeString:
        return age(record.opened_at, record.decided_at)

    def render_memory(self, value: str) -> SafeString:
        return memory_link(value)

    def render_memory_class(self, record: Escalation) -> SafeString:
        kind = getattr(record, "class_kind", None)
        return format_html(
            '<span class="mono">{}</span>{}',
            _memory(record).memory_class,
            format_html(' <span class="tag">{}</span>', kind) if kind else "",
        )

    def render_says(self, record: Escalation) -> SafeString:
        memory = _memory(record)
        return format_html(
            '<span class="mono">{}</span><span class="muted"> · </span><span class="mono">{}'
            '</span> = <span class="value mono">{}</span>{}',
            memory.subject,
            memory.field or memory.fact_key,
            jsonvalue(memory.value),
            format_html('<div class="cell-note">{}</div>', memory.note) if memory.note else "",
        )

    def render_derived_from(self, record: Escalation) -> SafeString:
        return reference_links(list(_memory(record).derived_from))

    def render_supersedes(self, record: Escalation) -> SafeString:
        previous = _memory(record).supersedes
        if previous is None:
            return mark_safe('<span class="muted">nothing</span>')  # nosec B308
        return format_html(
            '{} <span class="value mono">{}</span> {}',
            memory_link(previous.memory_id),
            jsonvalue(previous.value),
            badge(previous.status),
        )

    def render_status(self, record: Escalation) -> SafeString:
        return badge(record.status)

    def render_review(self, record: Escalation) -> SafeString:
        if record.status != EscalationStatus.OPEN:
            return format_html(
                '<span class="nowrap">{}</span> <span class="muted">· {}</span>',
                record.decided_by.get_username() if record.decided_by else "—",
                ts(record.decided_at),
            )
        page = memory_url(_memory(record).memory_id)
        requested_by = record.requested_by
        if requested_by is not None and requested_by.user_id == self.viewer_pk:
            return format_html(
                '<span class="self-written">You wrote it: another reviewer decides.</span>'
                ' <a href="{}">View</a>',
                page,
            )
        if not self.is_reviewer:
            return format_html(
                '<span class="muted">awaiting a reviewer</span> <a href="{}">View</a>', page
            )
        return format_html('<a class="btn btn-small" href="{}#promotion">Review</a>', page)
