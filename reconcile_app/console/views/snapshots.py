"""Snapshot pages: the list with its filters, one snapshot's detail, and its replay panel."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views import View
from django.views.generic import TemplateView
from django_filters.views import FilterView
from django_tables2 import SingleTableMixin

from reconcile_app.console.filtersets import ConsoleSnapshotFilterSet
from reconcile_app.console.forms.common import dress_filter_form
from reconcile_app.console.forms.replay import ReplayForm
from reconcile_app.console.mixins import (
    PER_PAGE,
    HtmxPartialMixin,
    StaffRequiredMixin,
    is_htmx,
    not_found_is_404,
)
from reconcile_app.console.tables.snapshots import SnapshotTable
from reconcile_app.errors import DomainError
from reconcile_app.selectors.audit import object_timeline
from reconcile_app.selectors.corrections import snapshot_taints
from reconcile_app.selectors.quarantine import snapshot_quarantines
from reconcile_app.selectors.snapshot_detail import console_snapshot_detail, filter_suggestions
from reconcile_app.selectors.snapshots import console_snapshots, snapshot_get
from reconcile_app.services.replay import snapshot_replay


class SnapshotListView(StaffRequiredMixin, HtmxPartialMixin, SingleTableMixin, FilterView):
    filterset_class = ConsoleSnapshotFilterSet
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
        with not_found_is_404():
            context["detail"] = console_snapshot_detail(snapshot_id=kwargs["snapshot_id"])
        context["refused_by"] = snapshot_quarantines(snapshot=context["detail"].snapshot)
        # Said up front, not only after a corrected replay: a tainted snapshot authorises no
        # commit (409 snapshot_tainted), and its reader should know why before acting on it.
        context["taints"] = snapshot_taints(snapshot_id=kwargs["snapshot_id"])
        context["timeline"] = object_timeline(
            object_kind="snapshot", object_ref=kwargs["snapshot_id"]
        )
        return context


REPLAY_TEMPLATE = "reconcile_app/partials/replay_result.html"


class SnapshotReplayView(StaffRequiredMixin, View):
    """Replay a snapshot as recorded or under today's corrections. Read-only, so any role."""

    def post(self, request: HttpRequest, snapshot_id: str) -> HttpResponse:
        with not_found_is_404():
            # The API's read: the console's people see every snapshot.
            snapshot = snapshot_get(user=request.user, snapshot_id=snapshot_id)
        form = ReplayForm(request.POST)
        context: dict[str, Any] = {"snapshot_id": snapshot_id}
        if not form.is_valid():
            context["error"] = DomainError("Choose how to replay.", code="invalid_mode")
        else:
            mode = form.cleaned_data["mode"]
            try:
                context["result"] = snapshot_replay(snapshot=snapshot, mode=mode)
            except DomainError as exc:
                context["error"] = exc
            if mode == "corrected":
                context["taints"] = snapshot_taints(snapshot_id=snapshot_id)
        if not is_htmx(request):
            result = context.get("result")
            if result is None:
                messages.error(request, context["error"].detail)
            elif result.exact:
                messages.success(
                    request, f"Replay {result.mode.replace('_', ' ')}: exact — hash matches."
                )
            else:
                changed = ", ".join(item["path"] for item in result.differences) or "the hash"
                messages.warning(
                    request, f"Replay {result.mode.replace('_', ' ')} differs: {changed}."
                )
            return redirect(f"{reverse('console-snapshot', args=[snapshot_id])}#replay")
        # htmx swaps only 2xx answers: a refusal is shown in the panel, with a 200.
        return TemplateResponse(request, REPLAY_TEMPLATE, context)
