"""The audit page: every operator, reviewer and administrator action, filtered by the URL,
exported as CSV; and the timeline partial that object pages load.

Everyone in a role may read the trail (auditors above all); nothing here writes.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import Any

import django_tables2 as tables
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.views import View
from django_filters.views import FilterView
from django_tables2 import SingleTableMixin

from reconcile_app.console.forms import dress_filter_form
from reconcile_app.console.quarantine_forms import dress_datetime_filters
from reconcile_app.console.views import (
    PER_PAGE,
    HtmxPartialMixin,
    StaffRequiredMixin,
    _without,
)
from reconcile_app.filtersets import AuditFilterSet
from reconcile_app.models import AuditEvent
from reconcile_app.selectors.audit import (
    TIMELINE_LIMIT,
    audit_changes,
    audit_csv_rows,
    audit_suggestions,
    console_audit_events,
    object_timeline,
)
from reconcile_app.templatetags.reconcile_tags import EMPTY, jsonvalue, short, ts

TIMELINE_TEMPLATE = "reconcile_app/partials/object_timeline.html"
# Object kinds with a page of their own: the audit row links to it.
OBJECT_PAGES = {
    "effect": "console-effect",
    "escalation": "console-escalation",
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
                if change.added or change.removed
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


class AuditListView(StaffRequiredMixin, HtmxPartialMixin, SingleTableMixin, FilterView):
    filterset_class = AuditFilterSet
    table_class = AuditTable
    table_pagination = {"per_page": PER_PAGE}
    template_name = "reconcile_app/audit_list.html"
    partial_template_name = "reconcile_app/partials/audit_region.html"

    def get_queryset(self) -> QuerySet:
        return console_audit_events()

    def get_filterset(self, filterset_class: Any) -> Any:
        filterset = super().get_filterset(filterset_class)
        dress_filter_form(
            filterset.form,
            datalists={
                "actor": "known-actors",
                "action": "known-actions",
                "object_kind": "known-kinds",
            },
        )
        dress_datetime_filters(filterset.form, "since", "until")
        return filterset

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        # The export takes the same filters as the list, without its page and sort.
        context["export_query"] = _without(self.request.GET, "page", "sort")
        if not self.wants_partial():
            context["suggestions"] = audit_suggestions()
        return context


class _Echo:
    """A file-like object whose write returns the line, for csv.writer in a stream."""

    def write(self, value: str) -> str:
        return value


class AuditExportView(StaffRequiredMixin, View):
    """The filtered rows as CSV, streamed: the export never holds the whole trail in memory."""

    def get(self, request: HttpRequest) -> HttpResponseBase:
        filterset = AuditFilterSet(data=request.GET, queryset=console_audit_events())
        if not filterset.is_valid():
            errors = "; ".join(
                f"{name}: {' '.join(messages)}" for name, messages in filterset.errors.items()
            )
            return HttpResponse(errors, status=400, content_type="text/plain; charset=utf-8")
        writer = csv.writer(_Echo())
        lines: Iterator[str] = (writer.writerow(row) for row in audit_csv_rows(filterset.qs))
        stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
        response = StreamingHttpResponse(lines, content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="audit-{stamp}.csv"'
        return response


class AuditTimelineView(StaffRequiredMixin, View):
    """The timeline partial alone: unfolded from a list row, or refreshed after an action."""

    def get(
        self, request: HttpRequest, object_kind: str, object_ref: str | None = None
    ) -> HttpResponse:
        try:
            limit = min(max(1, int(request.GET.get("limit", TIMELINE_LIMIT))), TIMELINE_LIMIT)
        except ValueError:
            limit = TIMELINE_LIMIT
        return TemplateResponse(
            request,
            TIMELINE_TEMPLATE,
            {
                "timeline": object_timeline(
                    object_kind=object_kind, object_ref=object_ref, limit=limit
                ),
                # Unfolded inside a table row: no panel around it.
                "compact": request.GET.get("compact") == "1",
            },
        )
