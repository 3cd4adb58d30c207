"""The quarantine page: every source and memory class with its state (and the memory records
under quarantine), the operators' dialogs to quarantine and lift, and the history.

Quarantining is the operators' strongest lever, so the dialog shows what it would touch
(`quarantine_preview`, which writes nothing) and asks for the target's name typed out. The
service then creates it as "applying" and a Celery task lists what it affects; the row asks
the server every POLL_SECONDS until it reads "applied". Every dialog is also a plain page, so
the forms work without JavaScript.
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

from reconcile_app.choices import QuarantineScope, QuarantineStatus, Role
from reconcile_app.console.filtersets import ConsoleQuarantineFilterSet
from reconcile_app.console.forms.common import dress_filter_form, dress_status_filter
from reconcile_app.console.forms.quarantine import QuarantineForm, QuarantineLiftForm
from reconcile_app.console.messages import console_message, hx_trigger
from reconcile_app.console.mixins import (
    PER_PAGE,
    HtmxPartialMixin,
    OperatorRequiredMixin,
    StaffRequiredMixin,
    form_error,
    is_htmx,
    not_found_is_404,
    polls,
)
from reconcile_app.console.node_links import node_blast_radius_url
from reconcile_app.console.quarantine_links import affected_url
from reconcile_app.console.tables.quarantine import (
    QuarantineHistoryTable,
    QuarantineTargetTable,
    affected_label,
)
from reconcile_app.errors import DomainError, NotFound
from reconcile_app.models import Quarantine
from reconcile_app.request_id import request_id_of
from reconcile_app.roles import has_role
from reconcile_app.selectors.audit import object_timeline
from reconcile_app.selectors.quarantine import (
    QuarantineTarget,
    console_quarantine,
    console_quarantine_history,
    quarantine_target,
    quarantine_targets,
)
from reconcile_app.selectors.quarantine_preview import DEFAULT_LOOKBACK, quarantine_preview
from reconcile_app.services.quarantine import quarantine_create, quarantine_lift

ROW_TEMPLATE = "reconcile_app/partials/quarantine_target_row.html"


DIALOG_TEMPLATE = "reconcile_app/partials/quarantine_dialog.html"


LIFT_DIALOG_TEMPLATE = "reconcile_app/partials/quarantine_lift_dialog.html"


DIALOG_PAGE_TEMPLATE = "reconcile_app/quarantine_dialog_page.html"


# The page re-reads its history and timeline when it hears this; the dialog closes on DONE.
CHANGED_EVENT = "quarantine-changed"


DONE_EVENT = "dialog-done"


PAGE_TIMELINE_LIMIT = 20


def _can_operate(request: HttpRequest) -> bool:
    return has_role(request.user, Role.OPERATOR)


def _target(scope: str, target: str) -> QuarantineTarget:
    with not_found_is_404():
        return quarantine_target(scope=scope, target=target)


class QuarantinePageView(StaffRequiredMixin, HtmxPartialMixin, SingleTableMixin, FilterView):
    """State of every target on top; the history (filterset + table, htmx partial) below."""

    filterset_class = ConsoleQuarantineFilterSet
    table_class = QuarantineHistoryTable
    table_pagination = {"per_page": PER_PAGE}
    template_name = "reconcile_app/quarantine.html"
    partial_template_name = "reconcile_app/partials/quarantine_history.html"

    def get_queryset(self) -> QuerySet:
        return console_quarantine_history()

    def get_filterset(self, filterset_class: Any) -> Any:
        filterset = super().get_filterset(filterset_class)
        dress_filter_form(filterset.form)
        dress_status_filter(filterset.form)
        return filterset

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        if not self.wants_partial():
            # The targets and the timeline sit outside the swapped history region.
            can_operate = _can_operate(self.request)
            context["can_operate"] = can_operate
            # Not paginated (no request): every source and class is on the page.
            context["targets_table"] = QuarantineTargetTable(
                quarantine_targets(), can_operate=can_operate
            )
            context["timeline"] = object_timeline(
                object_kind="quarantine", limit=PAGE_TIMELINE_LIMIT
            )
            context["timeline_limit"] = PAGE_TIMELINE_LIMIT
        return context


def target_row(request: HttpRequest, target: QuarantineTarget, *, polls: int = 0) -> HttpResponse:
    table = QuarantineTargetTable([target], can_operate=_can_operate(request), polls=polls)
    return TemplateResponse(request, ROW_TEMPLATE, {"table": table, "row": table.rows[0]})


class QuarantineTargetView(StaffRequiredMixin, View):
    """One target's row alone, for polling. Tells the page when the state has moved on."""

    def get(self, request: HttpRequest, scope: str, target: str) -> HttpResponse:
        row = _target(scope, target)
        response = target_row(request, row, polls=polls(request))
        since = request.GET.get("since")
        if since and since != row.state:
            response["HX-Trigger"] = CHANGED_EVENT
        return response


def _done(request: HttpRequest, row: QuarantineTarget, message: str) -> HttpResponse:
    """After an action through htmx: the new row replaces the old one, the dialog closes, the
    page re-reads its history and shows `message` (static/reconcile/messages.js)."""
    response = target_row(request, row)
    response["HX-Retarget"] = f"#{row.dom_id}"
    response["HX-Reswap"] = "outerHTML"
    response["HX-Trigger"] = hx_trigger(
        CHANGED_EVENT, DONE_EVENT, message=console_message("success", message)
    )
    return response


def _dialog_response(
    request: HttpRequest, template: str, context: dict[str, Any], status: int
) -> HttpResponse:
    if is_htmx(request):
        return TemplateResponse(request, template, context, status=status)
    return TemplateResponse(
        request, DIALOG_PAGE_TEMPLATE, {**context, "dialog_template": template}, status=status
    )


def quarantine_dialog(
    request: HttpRequest,
    *,
    scope: str,
    target: str,
    status: int = 200,
    error: DomainError | None = None,
    draft: dict[str, str] | None = None,
) -> HttpResponse:
    """The quarantine form with the preview of what it would touch."""
    if scope == QuarantineScope.MEMORY and is_htmx(request):
        # A memory id is typed, not picked from a row: an unknown one is said in the dialog.
        try:
            row = quarantine_target(scope=scope, target=target)
        except NotFound as exc:
            context = {"missing": exc, "target": target, "as_page": False}
            return TemplateResponse(request, DIALOG_TEMPLATE, context, status=404)
    else:
        row = _target(scope, target)
    preview: list[tuple[str, int, str, str | None]] = []
    lookback_from = timezone.now() - DEFAULT_LOOKBACK
    if not row.active:
        preview = [
            (
                name,
                count,
                affected_label(name),
                affected_url(scope=scope, target=target, name=name, since=lookback_from),
            )
            for name, count in quarantine_preview(
                scope=scope, target=target, since=lookback_from
            ).items()
        ]
    elif error is None:
        status = 409
    context = {
        "row": row,
        "blast_radius_url": node_blast_radius_url(f"memory:{target}")
        if scope == QuarantineScope.MEMORY
        else "",
        "preview": preview,
        "lookback_from": lookback_from,
        "error": error,
        "draft": draft or {},
        "as_page": not is_htmx(request),
    }
    return _dialog_response(request, DIALOG_TEMPLATE, context, status)


class QuarantineNewView(OperatorRequiredMixin, View):
    """GET: the dialog. POST: create the quarantine (the service audits it)."""

    def get(self, request: HttpRequest) -> HttpResponse:
        return quarantine_dialog(
            request, scope=request.GET.get("scope", ""), target=request.GET.get("target", "")
        )

    def post(self, request: HttpRequest) -> HttpResponse:
        form = QuarantineForm(request.POST)
        scope, target = request.POST.get("scope", ""), request.POST.get("target", "")
        draft = {name: request.POST.get(name, "") for name in ("reason", "ends_at", "confirm")}
        error: DomainError | None = None
        if not form.is_valid():
            error = form_error(form, {"reason": "reason_required", "ends_at": "invalid_ends_at"})
        elif not form.confirmed():
            error = DomainError(
                f"Type the name {target} exactly to confirm.", code="confirmation_mismatch"
            )
        else:
            try:
                quarantine_create(
                    scope=form.cleaned_data["scope"],
                    target=form.cleaned_data["target"],
                    reason=form.cleaned_data["reason"],
                    ends_at=form.cleaned_data["ends_at"],
                    actor=request.user,
                    request_id=request_id_of(request),
                )
            except DomainError as exc:
                error = exc
        if error is not None:
            return quarantine_dialog(
                request, scope=scope, target=target, status=error.status, error=error, draft=draft
            )
        done = f"Quarantine of {target} created; applying."
        if not is_htmx(request):
            messages.success(request, done)
            return redirect("console-quarantine")
        return _done(request, _target(scope, target), done)


def lift_dialog(
    request: HttpRequest,
    quarantine: Quarantine,
    *,
    status: int = 200,
    error: DomainError | None = None,
    draft: dict[str, str] | None = None,
) -> HttpResponse:
    if quarantine.status == QuarantineStatus.LIFTED and error is None:
        status = 409
    context = {
        "quarantine": quarantine,
        "error": error,
        "draft": draft or {},
        "as_page": not is_htmx(request),
    }
    return _dialog_response(request, LIFT_DIALOG_TEMPLATE, context, status)


def _quarantine(quarantine_id: str) -> Quarantine:
    with not_found_is_404():
        return console_quarantine(quarantine_id=quarantine_id)


class QuarantineLiftView(OperatorRequiredMixin, View):
    """GET: the dialog. POST: lift with a reason (the service audits it)."""

    def get(self, request: HttpRequest, quarantine_id: str) -> HttpResponse:
        return lift_dialog(request, _quarantine(quarantine_id))

    def post(self, request: HttpRequest, quarantine_id: str) -> HttpResponse:
        form = QuarantineLiftForm(request.POST)
        draft = {"reason": request.POST.get("reason", "")}
        error: DomainError | None = None
        if not form.is_valid():
            error = form_error(form)
        else:
            try:
                with not_found_is_404():
                    quarantine_lift(
                        quarantine_id=quarantine_id,
                        reason=form.cleaned_data["reason"],
                        actor=request.user,
                        request_id=request_id_of(request),
                    )
            except DomainError as exc:
                error = exc
        quarantine = _quarantine(quarantine_id)
        if error is not None:
            return lift_dialog(request, quarantine, status=error.status, error=error, draft=draft)
        done = f"Quarantine of {quarantine.target} lifted."
        if not is_htmx(request):
            messages.success(request, done)
            return redirect("console-quarantine")
        return _done(request, _target(quarantine.scope, quarantine.target), done)
