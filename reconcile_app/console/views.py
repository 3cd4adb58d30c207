"""Operator console pages. Thin: selectors read, services write, templates present."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin, UserPassesTestMixin
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.utils.cache import patch_vary_headers
from django.views import View
from django.views.generic import TemplateView
from django_filters.views import FilterView
from django_tables2 import SingleTableMixin

from reconcile_app.choices import ContradictionStatus, Role
from reconcile_app.console.forms import ContradictionResolveForm, dress_filter_form
from reconcile_app.console.tables import ContradictionTable, SnapshotTable
from reconcile_app.errors import Conflict, NotFound, ValidationFailed
from reconcile_app.filtersets import ContradictionFilterSet, SnapshotFilterSet
from reconcile_app.request_id import request_id_of
from reconcile_app.roles import has_role, is_staff_role
from reconcile_app.selectors.audit import object_timeline
from reconcile_app.selectors.contradictions import (
    console_contradiction,
    console_contradictions,
    contradiction_status_counts,
)
from reconcile_app.selectors.snapshot_detail import console_snapshot_detail, filter_suggestions
from reconcile_app.selectors.snapshots import console_snapshots
from reconcile_app.services.contradictions import contradiction_resolve

PER_PAGE = 25
CONTRADICTION_TABS = ("open", "resolved", "all")


class StaffRequiredMixin(LoginRequiredMixin, UserPassesTestMixin):
    """People in a role (operator, reviewer, auditor). An agent's user is refused with 403:
    agents act through the API with their capabilities, never through the console."""

    def test_func(self) -> bool:
        return is_staff_role(self.request.user)  # type: ignore[attr-defined]


class OperatorRequiredMixin(LoginRequiredMixin, UserPassesTestMixin):
    def test_func(self) -> bool:
        return has_role(self.request.user, Role.OPERATOR)  # type: ignore[attr-defined]


class ReviewerRequiredMixin(LoginRequiredMixin, UserPassesTestMixin):
    def test_func(self) -> bool:
        return has_role(self.request.user, Role.REVIEWER)  # type: ignore[attr-defined]


class StatusTabsMixin:
    """A list whose status filter is a row of tabs with counts (a filterset with `status`).

    The tab is the status filter, "all" is no status filter, and the counts honour every
    other filter. Subclasses name their tabs, the default one, and how to count.
    """

    request: HttpRequest
    filterset: Any
    tabs: tuple[str, ...]
    default_tab: str

    def tab(self) -> str:
        tab = self.request.GET.get("status") or self.default_tab
        return tab if tab in self.tabs else self.default_tab

    def get_filterset_kwargs(self, filterset_class: Any) -> dict[str, Any]:
        kwargs = super().get_filterset_kwargs(filterset_class)  # type: ignore[misc]
        data = (kwargs.get("data") or QueryDict()).copy()
        tab = self.tab()
        if tab == "all":
            data.pop("status", None)
        else:
            data["status"] = tab
        kwargs["data"] = data
        return kwargs

    def count_queryset(self) -> QuerySet:
        raise NotImplementedError

    def status_counts(self, queryset: QuerySet) -> dict[str, int]:
        raise NotImplementedError

    def tab_context(self) -> dict[str, Any]:
        others = self.filterset.data.copy()
        others.pop("status", None)
        unfiltered_by_status = type(self.filterset)(data=others, queryset=self.count_queryset())
        return {
            "tab": self.tab(),
            "tab_counts": self.status_counts(unfiltered_by_status.qs),
            "tab_query": _without(self.request.GET, "status", "page"),
        }


class HtmxPartialMixin:
    """Answer an htmx request with the partial it swaps in, anything else with the page.

    A history-restore request wants the whole page back, so it gets it. `Vary: HX-Request`
    stops a cache from serving a partial where a page was asked for.
    """

    request: HttpRequest
    partial_template_name: str

    def wants_partial(self) -> bool:
        htmx = getattr(self.request, "htmx", None)
        return bool(htmx) and not htmx.history_restore_request  # type: ignore[union-attr]

    def get_template_names(self) -> list[str]:
        if self.wants_partial():
            return [self.partial_template_name]
        return super().get_template_names()  # type: ignore[misc]

    def render_to_response(self, context: dict[str, Any], **kwargs: Any) -> HttpResponse:
        response = super().render_to_response(context, **kwargs)  # type: ignore[misc]
        patch_vary_headers(response, ("HX-Request",))
        return response


class SnapshotListView(StaffRequiredMixin, HtmxPartialMixin, SingleTableMixin, FilterView):
    filterset_class = SnapshotFilterSet
    table_class = SnapshotTable
    table_pagination = {"per_page": PER_PAGE}
    template_name = "reconcile_app/snapshot_list.html"
    partial_template_name = "reconcile_app/partials/snapshot_table.html"

    def get_queryset(self) -> QuerySet:
        return console_snapshots()

    def get_filterset(self, filterset_class: Any) -> Any:
        filterset = super().get_filterset(filterset_class)
        dress_filter_form(
            filterset.form,
            datalists={"decision_class": "known-decision-classes", "source": "known-sources"},
        )
        return filterset

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        if not self.wants_partial():
            # Suggestions feed the filter form, which a partial does not re-render.
            context["suggestions"] = filter_suggestions()
        return context


class SnapshotDetailView(StaffRequiredMixin, TemplateView):
    template_name = "reconcile_app/snapshot_detail.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        try:
            context["detail"] = console_snapshot_detail(snapshot_id=kwargs["snapshot_id"])
        except NotFound as exc:
            raise Http404(exc.detail) from exc
        context["timeline"] = object_timeline(
            object_kind="snapshot", object_ref=kwargs["snapshot_id"]
        )
        return context


class ContradictionListView(
    StaffRequiredMixin, StatusTabsMixin, HtmxPartialMixin, SingleTableMixin, FilterView
):
    """Contradictions by status tab (open by default: it is the triage queue)."""

    filterset_class = ContradictionFilterSet
    table_class = ContradictionTable
    table_pagination = {"per_page": PER_PAGE}
    template_name = "reconcile_app/contradiction_list.html"
    partial_template_name = "reconcile_app/partials/contradiction_region.html"
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
        return context


class ContradictionResolveView(OperatorRequiredMixin, View):
    """An operator closes a contradiction with a note; audited by the service.

    htmx gets the updated row back; a plain form post is redirected to the list.
    """

    def post(self, request: HttpRequest, contradiction_id: int) -> HttpResponse:
        form = ContradictionResolveForm(request.POST)
        error = ""
        if form.is_valid():
            try:
                contradiction_resolve(
                    contradiction_id=contradiction_id,
                    actor=request.user,
                    note=form.cleaned_data["note"],
                    # Same id as the access log and the X-Request-ID response header.
                    request_id=request_id_of(request) or uuid.uuid4().hex,
                )
            except NotFound as exc:
                raise Http404(exc.detail) from exc
            except (Conflict, ValidationFailed) as exc:
                error = exc.detail
        else:
            error = " ".join(str(message) for message in form.errors.get("note", ["Invalid note."]))

        if not request.htmx:  # type: ignore[attr-defined]
            if error:
                messages.error(request, error)
            else:
                messages.success(request, f"Contradiction {contradiction_id} resolved.")
            return redirect("console-contradictions")

        try:
            row = console_contradiction(contradiction_id=contradiction_id)
        except NotFound as exc:
            raise Http404(exc.detail) from exc
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
        if not error:
            # The page re-reads its tab counts when it hears this (see the region partial).
            response["HX-Trigger"] = "contradiction-resolved"
        return response


def _without(query: QueryDict, *names: str) -> str:
    kept = query.copy()
    for name in names:
        kept.pop(name, None)
    return kept.urlencode()
