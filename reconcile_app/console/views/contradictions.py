"""The contradictions queue (status tabs) and an operator's resolution, row by row."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.contrib import messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.urls import reverse
from django.views import View
from django_filters.views import FilterView
from django_tables2 import SingleTableMixin

from reconcile_app.choices import ContradictionStatus, Role
from reconcile_app.console.filtersets import ConsoleContradictionFilterSet
from reconcile_app.console.forms.common import dress_filter_form
from reconcile_app.console.forms.contradictions import ContradictionResolveForm
from reconcile_app.console.live import LiveQueueMixin
from reconcile_app.console.messages import console_message, hx_trigger
from reconcile_app.console.mixins import (
    PER_PAGE,
    HtmxPartialMixin,
    OperatorRequiredMixin,
    StaffRequiredMixin,
    StatusTabsMixin,
    is_htmx,
    not_found_is_404,
)
from reconcile_app.console.refusals import page_it_came_from
from reconcile_app.console.tables.contradictions import ContradictionTable
from reconcile_app.console.views.bulk import CONTRADICTION_CHOICES, bulk_filters
from reconcile_app.errors import Conflict, ValidationFailed
from reconcile_app.request_id import request_id_of
from reconcile_app.roles import has_role
from reconcile_app.selectors.bulk import CONTRADICTION_FILTERS
from reconcile_app.selectors.contradictions import (
    console_contradiction,
    console_contradictions,
    contradiction_status_counts,
)
from reconcile_app.services.contradictions import contradiction_resolve

CONTRADICTION_TABS = ("open", "resolved", "all")


class ContradictionListView(
    LiveQueueMixin,
    StaffRequiredMixin,
    StatusTabsMixin,
    HtmxPartialMixin,
    SingleTableMixin,
    FilterView,
):
    """Contradictions by status tab (open by default: it is the triage queue)."""

    filterset_class = ConsoleContradictionFilterSet
    table_class = ContradictionTable
    table_pagination = {"per_page": PER_PAGE}
    template_name = "reconcile_app/contradiction_list.html"
    partial_template_name = "reconcile_app/partials/contradiction_region.html"
    live_region = "#contradiction-region"
    tabs = CONTRADICTION_TABS
    default_tab = ContradictionStatus.OPEN

    def get_queryset(self) -> QuerySet:
        return console_contradictions()

    def count_queryset(self) -> QuerySet:
        return console_contradictions()

    def status_counts(self, queryset: QuerySet) -> dict[str, int]:
        return contradiction_status_counts(queryset)

    def get_filterset(self, filterset_class: Any) -> Any:
        filterset = super().get_filterset(filterset_class)
        dress_filter_form(filterset.form)
        return filterset

    def get_table_kwargs(self) -> dict[str, Any]:
        return {"can_resolve": has_role(self.request.user, Role.OPERATOR)}

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(self.tab_context())
        context["can_pick"] = has_role(self.request.user, Role.OPERATOR) and self.tab() != (
            ContradictionStatus.RESOLVED
        )
        context["bulk_filters"] = bulk_filters(self.filterset.form, CONTRADICTION_FILTERS)
        context["bulk_choices"] = list(CONTRADICTION_CHOICES.items())
        context.update(self.live_context())
        return context


class ContradictionResolveView(OperatorRequiredMixin, View):
    """An operator closes a contradiction with a note; audited by the service.

    htmx gets the updated row back; a plain form post is redirected to the list as the
    operator left it (tab, filters, page), with what happened.
    """

    def post(self, request: HttpRequest, contradiction_id: int) -> HttpResponse:
        form = ContradictionResolveForm(request.POST)
        error = ""
        if form.is_valid():
            try:
                with not_found_is_404():
                    contradiction_resolve(
                        contradiction_id=contradiction_id,
                        actor=request.user,
                        note=form.cleaned_data["note"],
                        # Same id as the access log and the X-Request-ID response header.
                        request_id=request_id_of(request),
                    )
            except (Conflict, ValidationFailed) as exc:
                error = exc.detail
        else:
            error = " ".join(str(message) for message in form.errors.get("note", ["Invalid note."]))

        if not is_htmx(request):
            if error:
                messages.error(request, error)
            else:
                messages.success(request, f"Contradiction {contradiction_id} resolved.")
            return redirect(_the_list_it_came_from(request))

        with not_found_is_404():
            row = console_contradiction(contradiction_id=contradiction_id)
        table = ContradictionTable(
            [row],
            request=request,
            can_resolve=True,
            errors={row.pk: error} if error else {},
            drafts={row.pk: request.POST.get("note", "")} if error else {},
        )
        html = render_to_string(
            "reconcile_app/partials/contradiction_row.html",
            {"table": table, "row": table.rows[0]},
            request=request,
        )
        response = HttpResponse(html)
        # The page re-reads its tab counts on the event, and says the message in its polite
        # live region (messages.js): the row's button is gone with the swap. A refusal
        # because someone else resolved it meanwhile is said too: the resolved row has no
        # form to hold it, and the operator whose note was refused would never be told.
        if not error:
            told = console_message("success", f"Contradiction {contradiction_id} resolved.")
        elif row.status != ContradictionStatus.OPEN:
            told = console_message("error", f"Not resolved by you: {error.rstrip('.')}.")
        else:
            return response  # refused beside the still-open row's form
        response["HX-Trigger"] = hx_trigger("contradiction-resolved", message=told)
        return response


def _the_list_it_came_from(request: HttpRequest) -> str:
    """The list page the form was posted from, its query (tab, filters, page) kept, as the
    refused-form redirect keeps it (console/refusals.py): sent to the bare list, an operator
    working through a filtered page lost it with every resolve. Only the list itself, never
    another page a Referer may name."""
    listed = reverse("console-contradictions")
    page = page_it_came_from(request)
    return page if page is not None and urlsplit(page).path == listed else listed
