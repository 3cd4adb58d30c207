"""The reviewers' promotion queue and their decisions on suggested memories.

A suggestion becomes `active` only when a reviewer other than its writer approves it; the
decision goes through `escalation_decide` (which settles the promotion, refuses
self-approval and audits both the escalation and the memory). Refusals come back on the
memory's page, beside the form, with the draft kept.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views import View
from django_filters.views import FilterView
from django_tables2 import SingleTableMixin

from reconcile_app.choices import EscalationStatus, Role
from reconcile_app.console.forms.common import dress_filter_form
from reconcile_app.console.forms.promotions import PromotionDecisionForm
from reconcile_app.console.mixins import (
    PER_PAGE,
    HtmxPartialMixin,
    ReviewerRequiredMixin,
    StaffRequiredMixin,
    StatusTabsMixin,
    form_error,
    not_found_is_404,
)
from reconcile_app.console.tables.promotions import PromotionTable
from reconcile_app.console.views.memories import memory_page
from reconcile_app.errors import DomainError
from reconcile_app.filtersets import PromotionFilterSet
from reconcile_app.request_id import request_id_of
from reconcile_app.roles import has_role
from reconcile_app.selectors.escalations import (
    ESCALATION_TABS,
    escalation_queue_order,
    escalation_status_counts,
)
from reconcile_app.selectors.promotions import console_promotions, reviewed_class_names
from reconcile_app.services.escalations import escalation_decide


class PromotionListView(
    StaffRequiredMixin, StatusTabsMixin, HtmxPartialMixin, SingleTableMixin, FilterView
):
    """Suggested memories by status tab; open first, the longest-waiting at the top."""

    filterset_class = PromotionFilterSet
    table_class = PromotionTable
    table_pagination = {"per_page": PER_PAGE}
    template_name = "reconcile_app/promotion_list.html"
    partial_template_name = "reconcile_app/partials/promotion_region.html"
    tabs = ESCALATION_TABS
    default_tab = EscalationStatus.OPEN

    def get_queryset(self) -> QuerySet:
        return escalation_queue_order(console_promotions(), self.tab())

    def count_queryset(self) -> QuerySet:
        return console_promotions()

    def status_counts(self, queryset: QuerySet) -> dict[str, int]:
        return escalation_status_counts(queryset)

    def get_table_kwargs(self) -> dict[str, Any]:
        return {
            "viewer": self.request.user,
            "is_reviewer": has_role(self.request.user, Role.REVIEWER),
        }

    def get_filterset(self, filterset_class: Any) -> Any:
        filterset = super().get_filterset(filterset_class)
        dress_filter_form(filterset.form, datalists={"memory_class": "reviewed-classes"})
        return filterset

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(self.tab_context())
        context["is_reviewer"] = has_role(self.request.user, Role.REVIEWER)
        if not self.wants_partial():
            # The suggestion list sits outside the swapped region: a partial needs none.
            context["reviewed_classes"] = reviewed_class_names()
        return context


class PromotionDecideView(ReviewerRequiredMixin, View):
    """A reviewer promotes or rejects a suggestion, with a rationale."""

    approve = True

    def post(self, request: HttpRequest, escalation_id: str) -> HttpResponse:
        memory_id = (
            console_promotions()
            .filter(escalation_id=escalation_id)
            .values_list("memory__memory_id", flat=True)
            .first()
        )
        if memory_id is None:
            raise Http404(f"no promotion {escalation_id}")
        verb = "approve" if self.approve else "reject"
        draft = {"rationale": request.POST.get("rationale", "")}
        form = PromotionDecisionForm(request.POST)
        if not form.is_valid():
            return memory_page(
                request, memory_id, status=400, error=form_error(form), decided_as=verb, draft=draft
            )
        try:
            with not_found_is_404():
                escalation_decide(
                    escalation_id=escalation_id,
                    reviewer=request.user,
                    approve=self.approve,
                    rationale=form.cleaned_data["rationale"],
                    request_id=request_id_of(request),
                )
        except DomainError as exc:
            # Self-approval (403), a missing rationale (400), already decided (409).
            return memory_page(
                request, memory_id, status=exc.status, error=exc, decided_as=verb, draft=draft
            )
        outcome = "promoted: it is active" if self.approve else "rejected"
        messages.success(request, f"Memory {memory_id} {outcome}.")
        return redirect("console-memory", memory_id=memory_id)
