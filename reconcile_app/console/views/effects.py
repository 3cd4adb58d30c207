"""Console pages for effects: the unknown-outcome queue, one effect's timeline, and the
operators' levers (run a readback now, resolve by hand, escalate to the owner).

"Run readback now" only queues work (the service enqueues on commit); the status panel then
asks the server every two seconds, through a small partial, until nothing is under way.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.views import View
from django_filters.views import FilterView
from django_tables2 import SingleTableMixin

from reconcile_app.choices import EffectStatus, Role
from reconcile_app.console.filtersets import ConsoleEffectFilterSet
from reconcile_app.console.forms.common import dress_filter_form
from reconcile_app.console.forms.effects import EffectEscalateForm, EffectResolveForm
from reconcile_app.console.live import LiveQueueMixin
from reconcile_app.console.messages import console_message, hx_trigger
from reconcile_app.console.mixins import (
    MAX_POLLS,
    PER_PAGE,
    POLL_SECONDS,
    HtmxPartialMixin,
    OperatorRequiredMixin,
    StaffRequiredMixin,
    StatusTabsMixin,
    form_error,
    is_htmx,
    not_found_is_404,
    polls,
)
from reconcile_app.console.tables.effects import EffectTable
from reconcile_app.console.views.bulk import EFFECT_CHOICES, bulk_filters
from reconcile_app.errors import DomainError
from reconcile_app.request_id import request_id_of
from reconcile_app.roles import has_role
from reconcile_app.selectors.audit import object_timeline
from reconcile_app.selectors.bulk import EFFECT_FILTERS
from reconcile_app.selectors.effects import (
    EFFECT_TABS,
    EffectState,
    console_effect_detail,
    console_effect_state,
    console_effects,
    effect_queue_order,
    effect_source_names,
    effect_status_counts,
)
from reconcile_app.services.effect_escalations import escalation_open_for_effect
from reconcile_app.services.effects import effect_request_check, effect_resolve_manually
from reconcile_app.templatetags.effect_tags import effect_story

DETAIL_TEMPLATE = "reconcile_app/effect_detail.html"


STATUS_TEMPLATE = "reconcile_app/partials/effect_status.html"


# The page re-reads its timeline and actions when it hears this (see the detail template).
CHANGED_EVENT = "effect-changed"


TAB_LABELS = {
    EffectStatus.UNKNOWN: "Unknown",
    EffectStatus.POSTCONDITION_FAILED: "Postcondition failed",
    EffectStatus.ACCEPTED: "Awaiting readback",
    EffectStatus.VERIFIED: "Verified",
    EffectStatus.REJECTED: "Rejected",
    EffectStatus.NOT_EXECUTED: "Not executed",
    "all": "All",
}


class EffectListView(
    LiveQueueMixin,
    StaffRequiredMixin,
    StatusTabsMixin,
    HtmxPartialMixin,
    SingleTableMixin,
    FilterView,
):
    """Effects by status tab: unknown outcomes by default, the longest-waiting first."""

    filterset_class = ConsoleEffectFilterSet
    table_class = EffectTable
    table_pagination = {"per_page": PER_PAGE}
    template_name = "reconcile_app/effect_list.html"
    partial_template_name = "reconcile_app/partials/effect_region.html"
    live_region = "#effect-region"
    tabs = EFFECT_TABS
    default_tab = EffectStatus.UNKNOWN

    def get_queryset(self) -> QuerySet:
        return effect_queue_order(console_effects(), self.tab())

    def count_queryset(self) -> QuerySet:
        return console_effects()

    def status_counts(self, queryset: QuerySet) -> dict[str, int]:
        return effect_status_counts(queryset)

    def get_filterset(self, filterset_class: Any) -> Any:
        filterset = super().get_filterset(filterset_class)
        dress_filter_form(filterset.form, datalists={"source": "known-effect-sources"})
        return filterset

    def can_pick(self) -> bool:
        return (
            has_role(self.request.user, Role.OPERATOR)
            and self.tab() in PICKABLE_TABS
            and not self.narrowed_beyond_bulk()
        )

    def narrowed_beyond_bulk(self) -> bool:
        """A filter the bulk selection does not carry is applied: "all N matching" would act
        on more rows than the list shows, so the list offers no selection at all."""
        form = self.filterset.form
        cleaned = form.cleaned_data if form.is_valid() else {}
        return any(cleaned.get(name) for name in LIST_ONLY_FILTERS)

    def get_table_kwargs(self) -> dict[str, Any]:
        return {"can_pick": self.can_pick()}

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(self.tab_context())
        context["can_pick"] = self.can_pick()
        context["bulk_filters"] = bulk_filters(self.filterset.form, EFFECT_FILTERS)
        context["bulk_choices"] = list(EFFECT_CHOICES.items())
        context.update(self.live_context())
        context["tab_items"] = [
            {"value": tab, "label": TAB_LABELS.get(tab, tab), "count": context["tab_counts"][tab]}
            for tab in EFFECT_TABS
        ]
        if not self.wants_partial():
            context["source_names"] = effect_source_names()
        return context


# Filters of the list alone: the overview's "settled in the window" (concluded outcomes, which
# a bulk job would skip anyway) and a quarantine's "pending" (three statuses no one tab shows).
LIST_ONLY_FILTERS = ("settled_after", "pending")


# Tabs whose rows a bulk action can act on (a job skips any row already concluded).
PICKABLE_TABS = (
    EffectStatus.UNKNOWN,
    EffectStatus.POSTCONDITION_FAILED,
    EffectStatus.ACCEPTED,
    "all",
)


def status_context(
    request: HttpRequest,
    state: EffectState,
    *,
    polls: int = 0,
    error: DomainError | None = None,
    queued: bool = False,
) -> dict[str, Any]:
    return {
        "state": state,
        "effect": state.effect,
        "can_operate": has_role(request.user, Role.OPERATOR),
        "polling": state.working and polls < MAX_POLLS,
        "gave_up": state.working and polls >= MAX_POLLS,
        "next_poll": polls + 1,
        "poll_seconds": POLL_SECONDS,
        "check_error": error,
        "queued": queued,
    }


def effect_page(
    request: HttpRequest,
    key: str,
    *,
    status: int = 200,
    form_name: str = "",
    error: DomainError | None = None,
    draft: dict[str, str] | None = None,
) -> HttpResponse:
    """The detail page; after a refused action, with the refusal beside its form."""
    with not_found_is_404():
        detail = console_effect_detail(idempotency_key=key)
    context = status_context(request, detail.state)
    context.update(
        {
            "detail": detail,
            "form_name": form_name,
            "form_error": error,
            "draft": draft or {},
            "timeline": object_timeline(object_kind="effect", object_ref=key),
        }
    )
    return TemplateResponse(request, DETAIL_TEMPLATE, context, status=status)


class EffectDetailView(StaffRequiredMixin, View):
    def get(self, request: HttpRequest, key: str) -> HttpResponse:
        return effect_page(request, key)


class EffectStatusView(StaffRequiredMixin, View):
    """The status panel alone, for polling. Tells the page when the effect has moved on."""

    def get(self, request: HttpRequest, key: str) -> HttpResponse:
        with not_found_is_404():
            state = console_effect_state(idempotency_key=key)
        response = TemplateResponse(
            request, STATUS_TEMPLATE, status_context(request, state, polls=polls(request))
        )
        since = request.GET.get("since")
        if since and since != state.version:
            # The timeline re-reads itself on the event; the move is said in the page's polite
            # live region (messages.js): the panel is swapped whole, and a live region swapped
            # in already holding its text is not announced.
            response["HX-Trigger"] = hx_trigger(CHANGED_EVENT, message=effect_moved_on(state))
        return response


def effect_moved_on(state: EffectState) -> dict[str, Any]:
    """What the operator watching an effect hears when its status panel changes."""
    effect = state.effect
    status = effect.status.replace("_", " ")
    story = effect_story(effect)
    return console_message("info", f"{effect.idempotency_key} is {status}. {story}".strip())


class EffectCheckView(OperatorRequiredMixin, View):
    """Run readback now: queue a readback (accepted) or a resolution (unknown)."""

    def post(self, request: HttpRequest, key: str) -> HttpResponse:
        error: DomainError | None = None
        try:
            with not_found_is_404():
                effect_request_check(
                    idempotency_key=key,
                    actor=request.user,
                    request_id=request_id_of(request),
                )
        except DomainError as exc:
            error = exc
        if not is_htmx(request):
            if error is not None:
                messages.error(request, error.detail)
            else:
                messages.success(request, f"Check queued for {key}.")
            return redirect("console-effect", key=key)
        with not_found_is_404():
            state = console_effect_state(idempotency_key=key)
        response = TemplateResponse(
            request,
            STATUS_TEMPLATE,
            status_context(request, state, error=error, queued=error is None),
        )
        if error is None:
            response["HX-Trigger"] = CHANGED_EVENT
        return response


class EffectResolveView(OperatorRequiredMixin, View):
    """Resolve by hand: the service records the verdict as evidence and audits it."""

    def post(self, request: HttpRequest, key: str) -> HttpResponse:
        form = EffectResolveForm(request.POST)
        draft = {
            "outcome": request.POST.get("outcome", ""),
            "reason": request.POST.get("reason", ""),
            "confirmed_by_owner": "1" if request.POST.get("confirmed_by_owner") else "",
        }
        if not form.is_valid():
            return effect_refused(request, key, "resolve", form_error(form), draft)
        try:
            with not_found_is_404():
                effect = effect_resolve_manually(
                    idempotency_key=key,
                    outcome=form.cleaned_data["outcome"],
                    reason=form.cleaned_data["reason"],
                    actor=request.user,
                    request_id=request_id_of(request),
                    confirmed_by_owner=form.cleaned_data["confirmed_by_owner"],
                )
        except DomainError as exc:
            return effect_refused(request, key, "resolve", exc, draft)
        messages.success(request, f"{key} resolved by hand: {effect.status.replace('_', ' ')}.")
        return redirect("console-effect", key=key)


class EffectEscalateView(OperatorRequiredMixin, View):
    """Hand the effect to its owner: opens (or returns the open) escalation for it."""

    def post(self, request: HttpRequest, key: str) -> HttpResponse:
        form = EffectEscalateForm(request.POST)
        draft = {"reason": request.POST.get("reason", "")}
        if not form.is_valid():
            return effect_refused(request, key, "escalate", form_error(form), draft)
        try:
            with not_found_is_404():
                escalation = escalation_open_for_effect(
                    idempotency_key=key,
                    actor=request.user,
                    reason=form.cleaned_data["reason"],
                    request_id=request_id_of(request),
                )
        except DomainError as exc:
            return effect_refused(request, key, "escalate", exc, draft)
        messages.success(request, f"Escalated to {escalation.owner} as {escalation.escalation_id}.")
        return redirect("console-effect", key=key)


def effect_refused(
    request: HttpRequest, key: str, form_name: str, error: DomainError, draft: dict[str, str]
) -> HttpResponse:
    """The effect's page with a form's refusal beside it (console/refusals.py moves it back
    to the page's own URL for a browser that posted without htmx)."""
    return effect_page(
        request, key, status=error.status, form_name=form_name, error=error, draft=draft
    )
