"""The audit page: every operator, reviewer and administrator action, filtered by the URL,
exported as CSV; and the timeline partial that object pages load.

Everyone in a role may read the trail (auditors above all); nothing here writes.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.views import View
from django_filters.views import FilterView
from django_tables2 import SingleTableMixin

from reconcile_app.console.filtersets import ConsoleAuditFilterSet
from reconcile_app.console.forms.common import dress_datetime_filters, dress_filter_form
from reconcile_app.console.mixins import PER_PAGE, HtmxPartialMixin, StaffRequiredMixin, _without
from reconcile_app.console.tables.audit import AuditTable
from reconcile_app.selectors.audit import (
    TIMELINE_LIMIT,
    audit_csv_rows,
    audit_suggestions,
    console_audit_events,
    object_timeline,
)

TIMELINE_TEMPLATE = "reconcile_app/partials/object_timeline.html"


class AuditListView(StaffRequiredMixin, HtmxPartialMixin, SingleTableMixin, FilterView):
    filterset_class = ConsoleAuditFilterSet
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
        query = _without(self.request.GET, "page", "sort")
        export = reverse("console-audit-export")
        context["audit_export_url"] = f"{export}?{query}" if query else export
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
        filterset = ConsoleAuditFilterSet(data=request.GET, queryset=console_audit_events())
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
