"""Bulk triage's tables: the pick column the list tables share, and a job's items."""

from __future__ import annotations

from typing import Any

import django_tables2 as tables
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from reconcile_app.choices import BulkJobKind
from reconcile_app.console.tables.common import TABLE_TEMPLATE, PagedTable
from reconcile_app.models import BulkJobItem
from reconcile_app.templatetags.reconcile_tags import EMPTY, badge, ts

# The form the list's pick boxes belong to (partials/bulk_bar.html); the boxes sit in the
# table, outside it, and join it through their `form` attribute.
BULK_FORM = "bulk-form"


def pick_column() -> tables.Column:
    """A checkbox per row; the header's box picks every row on the page (bulk.js)."""
    return tables.Column(
        empty_values=(),
        orderable=False,
        verbose_name=mark_safe(  # nosec B308 (a constant: nothing from a request)
            '<input type="checkbox" class="bulk-pick-all" form="bulk-form" '
            'aria-label="Select every row on this page">'
        ),
        attrs={"td": {"class": "pick"}, "th": {"class": "pick"}},
    )


def pick_box(name: str, value: Any, label: str) -> SafeString:
    return format_html(
        '<input type="checkbox" class="bulk-pick" name="{}" value="{}" form="{}"'
        ' aria-label="Select {}">',
        name,
        value,
        BULK_FORM,
        label,
    )


class JobItemTable(PagedTable):
    """Each item of a job: where it stood when the job reached it, and where it left it."""

    position = tables.Column(verbose_name="#", attrs={"td": {"class": "num"}})
    ref = tables.Column(verbose_name="Row")
    state = tables.Column(verbose_name="Result")
    before = tables.Column(verbose_name="Was")
    after = tables.Column(verbose_name="Now")
    detail = tables.Column(verbose_name="Why")
    finished_at = tables.Column(verbose_name="At (UTC)")

    class Meta:
        model = BulkJobItem
        fields = ()
        sequence = ("position", "ref", "state", "before", "after", "detail", "finished_at")
        template_name = TABLE_TEMPLATE
        orderable = False
        attrs = {"class": "data-table", "id": "job-items"}
        row_attrs = {"data-state": lambda record: record.state}
        empty_text = "This job has no rows."

    def __init__(self, *args: Any, kind: str = BulkJobKind.EFFECTS, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The job's kind, from the job itself: no per-row join to it.
        self.kind = kind

    def render_position(self, value: int) -> int:
        return value + 1

    def render_ref(self, record: BulkJobItem) -> SafeString:
        if self.kind == BulkJobKind.EFFECTS:
            return format_html(
                '<a class="mono" href="{}">{}</a>',
                reverse("console-effect", args=[record.ref]),
                record.ref,
            )
        return format_html('<span class="mono">contradiction {}</span>', record.ref)

    def render_state(self, record: BulkJobItem) -> SafeString:
        # The stored value (its badge colour), not the choice's display label.
        return badge(record.state)

    def render_before(self, value: str) -> SafeString:
        return badge(value) if value else EMPTY

    def render_after(self, value: str) -> SafeString:
        return badge(value) if value else EMPTY

    def render_finished_at(self, value: Any) -> SafeString:
        return ts(value)
