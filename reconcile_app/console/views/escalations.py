"""Console pages for escalations: the reviewers' queue, one escalation, and its decision.

Only reviewers see the decision forms, never on an escalation they raised; the server checks
both again (the role here, self-approval in `escalation_decide`) and shows any refusal inline.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.utils import timezone
from django.views import View
from django_filters.views import FilterView
from django_tables2 import SingleTableMixin

from reconcile_app.choices import EscalationStatus, Role
from reconcile_app.console.filtersets import ConsoleEscalationFilterSet
from reconcile_app.console.forms.common import dress_filter_form
from reconcile_app.console.forms.escalations import EscalationDecisionForm
from reconcile_app.console.live import LiveQueueMixin
from reconcile_app.console.mixins import (
    PER_PAGE,
    HtmxPartialMixin,
    ReviewerRequiredMixin,
    StaffRequiredMixin,
    StatusTabsMixin,
    not_found_is_404,
)
from reconcile_app.console.tables.escalations import EscalationTable
from reconcile_app.errors import DomainError
from reconcile_app.request_id import request_id_of
from reconcile_app.roles import has_role
from reconcile_app.selectors.approvals import evidence_attested_by
from reconcile_app.selectors.audit import object_timeline
from reconcile_app.selectors.escalation_commit_blocks import commit_blocks
from reconcile_app.selectors.escalations import (
    ESCALATION_TABS,
    console_escalation_detail,
    console_escalations,
    escalation_queue_order,
    escalation_status_counts,
    escalation_suggestions,
)
from reconcile_app.selectors.kept_records import records_grounded_on, records_kept_written_by
from reconcile_app.services.escalations import escalation_decide

DETAIL_TEMPLATE = "reconcile_app/escalation_detail.html"


class EscalationListView(
    LiveQueueMixin,
    StaffRequiredMixin,
    StatusTabsMixin,
    HtmxPartialMixin,
    SingleTableMixin,
    FilterView,
):
    """Escalations by status tab; open first, the longest-waiting at the top."""

    filterset_class = ConsoleEscalationFilterSet
    table_class = EscalationTable
    table_pagination = {"per_page": PER_PAGE}
    template_name = "reconcile_app/escalation_list.html"
    partial_template_name = "reconcile_app/partials/escalation_region.html"
    live_region = "#escalation-region"
    tabs = ESCALATION_TABS
    default_tab = EscalationStatus.OPEN

    def get_queryset(self) -> QuerySet:
        return escalation_queue_order(console_escalations(), self.tab())

    def count_queryset(self) -> QuerySet:
        return console_escalations()

    def status_counts(self, queryset: QuerySet) -> dict[str, int]:
        return escalation_status_counts(queryset)

    def get_filterset(self, filterset_class: Any) -> Any:
        filterset = super().get_filterset(filterset_class)
        dress_filter_form(
            filterset.form, datalists={"owner": "known-owners", "code": "known-codes"}
        )
        return filterset

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(self.tab_context())
        context.update(self.live_context())
        table = context["table"]
        # For the rows on this page only, however many match.
        shown = [row.record for row in table.page.object_list] if table.page else []
        table.commit_blocks = commit_blocks(shown, timezone.now())
        if not self.wants_partial():
            # The suggestion lists sit outside the swapped region: a partial needs none.
            context["suggestions"] = escalation_suggestions()
        return context


def escalation_page(
    request: HttpRequest,
    escalation_id: str,
    *,
    status: int = 200,
    error: DomainError | None = None,
    decided_as: str = "",
    draft: dict[str, str] | None = None,
) -> HttpResponse:
    """The detail page; after a refused decision, with the refusal and the draft in place."""
    with not_found_is_404():
        detail = console_escalation_detail(escalation_id=escalation_id)
    is_reviewer = has_role(request.user, Role.REVIEWER)
    raised_by_me = detail.raised_by(request.user)
    can_decide = (
        is_reviewer and not raised_by_me and detail.escalation.status == EscalationStatus.OPEN
    )
    # Approving an ownerless record's escalation without a selection keeps the owned
    # records: when this reviewer wrote one, they must select (another) record.
    kept_unless_selected = (
        records_kept_written_by(request.user, detail.escalation, None) if can_decide else []
    )
    # The evidence this decision or suggested memory rests on that this reviewer attested:
    # they may reject it, never approve it (escalation_decide refuses).
    attested_by_me = (
        evidence_attested_by(request.user, detail.escalation)
        if can_decide and (detail.proposal is not None or detail.escalation.memory_id)
        else []
    )
    return TemplateResponse(
        request,
        DETAIL_TEMPLATE,
        {
            "detail": detail,
            "escalation": detail.escalation,
            "is_reviewer": is_reviewer,
            "raised_by_me": raised_by_me,
            "written_by_me": detail.written_by(request.user),
            # Candidates derived from evidence this reviewer attested: another must keep them.
            "grounded_on_me": (
                records_grounded_on(request.user, (c.record for c in detail.candidates))
                if can_decide and detail.is_fact
                else set()
            ),
            "kept_unless_selected": kept_unless_selected,
            "attested_by_me": attested_by_me,
            "can_decide": can_decide,
            "proposal": detail.proposal,
            "window_open": (
                detail.proposal is not None and detail.proposal.window_open(timezone.now())
            ),
            "error": error,
            "decided_as": decided_as,
            "draft": draft or {},
            "timeline": object_timeline(object_kind="escalation", object_ref=escalation_id),
        },
        status=status,
    )


class EscalationDetailView(StaffRequiredMixin, View):
    def get(self, request: HttpRequest, escalation_id: str) -> HttpResponse:
        return escalation_page(request, escalation_id)


class EscalationDecideView(ReviewerRequiredMixin, View):
    """A reviewer approves or rejects; `escalation_decide` enforces and audits the rules."""

    approve = True

    def post(self, request: HttpRequest, escalation_id: str) -> HttpResponse:
        form = EscalationDecisionForm(request.POST)
        verb = "approve" if self.approve else "reject"
        draft = {
            "rationale": request.POST.get("rationale", ""),
            "selected_ref": request.POST.get("selected_ref", ""),
        }
        if not form.is_valid():
            error = DomainError(
                " ".join(str(message) for errors in form.errors.values() for message in errors),
                code="invalid_request",
            )
            return escalation_page(
                request, escalation_id, status=400, error=error, decided_as=verb, draft=draft
            )
        try:
            with not_found_is_404():
                escalation = escalation_decide(
                    escalation_id=escalation_id,
                    reviewer=request.user,
                    approve=self.approve,
                    rationale=form.cleaned_data["rationale"],
                    selected_ref=form.cleaned_data["selected_ref"] or None,
                    request_id=request_id_of(request),
                )
        except DomainError as exc:
            # Self-approval (403), a missing rationale or selection (400), already decided
            # (409): the page comes back with the message where the form was.
            return escalation_page(
                request, escalation_id, status=exc.status, error=exc, decided_as=verb, draft=draft
            )
        messages.success(request, f"Escalation {escalation.escalation_id} {escalation.status}.")
        return redirect("console-escalation", escalation_id=escalation.escalation_id)
