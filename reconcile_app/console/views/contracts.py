"""Console pages for contract versions: every class and its versions, one version (its
obligation, fields, rules, actions, release gates, activations, audit and decision record),
two versions side by side, and a reviewer's activation.

Activating only asks: the release gates run in a Celery task, so after the request the page
shows the running activation, whose panel asks the server again every two seconds until it
is activated or refused, then tells the page to re-read itself. Only reviewers see the form;
the server checks the role again (here and in `contract_activation_request`) and shows any
refusal beside the form with the draft kept.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.views import View

from reconcile_app.choices import ActivationStatus, Role
from reconcile_app.console.forms.contracts import ContractActivationForm
from reconcile_app.console.mixins import (
    MAX_POLLS,
    POLL_SECONDS,
    ReviewerRequiredMixin,
    StaffRequiredMixin,
    form_error,
    not_found_is_404,
    polls,
)
from reconcile_app.console.tables.contract_diff import diff_sections
from reconcile_app.console.tables.contracts import ContractVersionTable
from reconcile_app.errors import DomainError
from reconcile_app.request_id import request_id_of
from reconcile_app.roles import has_role
from reconcile_app.selectors.audit import object_timeline
from reconcile_app.selectors.contract_diff import contract_versions_diff
from reconcile_app.selectors.contract_versions import (
    ContractVersionDetail,
    contract_classes,
    contract_version_detail,
)
from reconcile_app.selectors.contracts import contract_version
from reconcile_app.services.contract_lifecycle import (
    contract_activation_request,
)
from reconcile_app.services.decision_record import decision_record_markdown
from reconcile_app.services.outcome_preview import BUDGET_SECONDS as OUTCOMES_BUDGET
from reconcile_app.services.outcome_preview import LATEST as OUTCOMES_LATEST
from reconcile_app.services.outcome_preview import outcome_preview

DETAIL_TEMPLATE = "reconcile_app/contract_detail.html"
RELEASE_TEMPLATE = "reconcile_app/partials/contract_release.html"
# The page re-reads its head and body when it hears this (see the detail template).
CHANGED_EVENT = "contract-changed"


class ContractListView(StaffRequiredMixin, View):
    """Every decision class, its active version and each version's status and gates."""

    def get(self, request: HttpRequest) -> HttpResponse:
        classes = contract_classes()
        return TemplateResponse(
            request,
            "reconcile_app/contract_list.html",
            {
                "classes": [
                    (view, ContractVersionTable(view.versions, active=view.active))
                    for view in classes
                ],
                "version_count": sum(len(view.versions) for view in classes),
            },
        )


def release_state(detail: ContractVersionDetail) -> str:
    """What the release panel shows, as one token: it changes when the activation moves."""
    latest = detail.latest_activation
    if latest is None:
        return f"none:{detail.contract.status}"
    return f"{latest.activation_id}:{latest.status}:{detail.contract.status}"


def release_context(
    request: HttpRequest,
    detail: ContractVersionDetail,
    *,
    poll_count: int = 0,
    error: DomainError | None = None,
    draft: dict[str, str] | None = None,
) -> dict[str, Any]:
    running = detail.running is not None
    contract = detail.contract
    return {
        "detail": detail,
        "contract": contract,
        "report": detail.latest_activation,
        "state": release_state(detail),
        "is_reviewer": has_role(request.user, Role.REVIEWER),
        "polling": running and poll_count < MAX_POLLS,
        "gave_up": running and poll_count >= MAX_POLLS,
        "next_poll": poll_count + 1,
        "poll_seconds": POLL_SECONDS,
        "error": error,
        "draft": draft or {},
        "activate_label": (
            f"Roll back to {contract.version}"
            if detail.is_rollback
            else f"Activate {contract.version}"
        ),
    }


def contract_page(
    request: HttpRequest,
    decision_class: str,
    version: str,
    *,
    status: int = 200,
    error: DomainError | None = None,
    draft: dict[str, str] | None = None,
) -> HttpResponse:
    """The version's page; after a refused activation, with the refusal and the draft."""
    with not_found_is_404():
        detail = contract_version_detail(decision_class=decision_class, version=version)
    context = release_context(request, detail, error=error, draft=draft)
    context.update(
        {
            "adr": decision_record_markdown(detail),
            "timeline": object_timeline(object_kind="contract", object_ref=detail.label),
        }
    )
    return TemplateResponse(request, DETAIL_TEMPLATE, context, status=status)


class ContractDetailView(StaffRequiredMixin, View):
    def get(self, request: HttpRequest, decision_class: str, version: str) -> HttpResponse:
        return contract_page(request, decision_class, version)


class ContractReleaseView(StaffRequiredMixin, View):
    """The release panel alone, for polling; tells the page when the activation moved on."""

    def get(self, request: HttpRequest, decision_class: str, version: str) -> HttpResponse:
        with not_found_is_404():
            detail = contract_version_detail(
                decision_class=decision_class, version=version, parts=False
            )
        response = TemplateResponse(
            request, RELEASE_TEMPLATE, release_context(request, detail, poll_count=polls(request))
        )
        since = request.GET.get("since")
        if since and since != release_state(detail):
            response["HX-Trigger"] = CHANGED_EVENT
        return response


class ContractActivateView(ReviewerRequiredMixin, View):
    """A reviewer asks for the version to go live; the gates run in a Celery task."""

    def post(self, request: HttpRequest, decision_class: str, version: str) -> HttpResponse:
        with not_found_is_404():
            contract = contract_version(decision_class=decision_class, version=version)
        draft = {
            "rationale": request.POST.get("rationale", ""),
            "confirm": request.POST.get("confirm", ""),
        }
        form = ContractActivationForm(request.POST)
        label = str(contract)
        error: DomainError | None = None
        if not form.is_valid():
            error = form_error(form)
        elif not form.confirmed(label):
            error = DomainError(
                f"Type the version's label, {label}, exactly to confirm.",
                code="confirmation_mismatch",
            )
        if error is not None:
            return contract_page(
                request, decision_class, version, status=error.status, error=error, draft=draft
            )
        try:
            activation = contract_activation_request(
                contract=contract,
                actor=request.user,
                rationale=form.cleaned_data["rationale"],
                request_id=request_id_of(request),
            )
        except DomainError as exc:
            # A missing rationale (400), already active or already being activated (409):
            # the page comes back with the message where the form was.
            return contract_page(
                request, decision_class, version, status=exc.status, error=exc, draft=draft
            )
        # A worker may already have finished it (an eager or very quick one): say what is so.
        activation.refresh_from_db(fields=["status"])
        outcome = {
            ActivationStatus.RUNNING: "the release gates are running",
            ActivationStatus.ACTIVATED: f"the release gates passed and {label} is active",
        }.get(ActivationStatus(activation.status), f"it was {activation.status}")
        messages.success(
            request, f"Activation {activation.activation_id} of {label} requested: {outcome}."
        )
        return redirect("console-contract", decision_class=decision_class, version=version)


class ContractDiffView(StaffRequiredMixin, View):
    """Two versions of a class side by side (by default the active one and the newest)."""

    def get(self, request: HttpRequest, decision_class: str) -> HttpResponse:
        with not_found_is_404():
            compared = contract_versions_diff(
                decision_class=decision_class,
                from_version=request.GET.get("from") or None,
                to_version=request.GET.get("to") or None,
            )
        before, after = compared.diff.before, compared.diff.after
        return TemplateResponse(
            request,
            "reconcile_app/contract_diff.html",
            {
                "decision_class": decision_class,
                "compared": compared,
                "diff": compared.diff,
                "sections": diff_sections(compared.diff),
                # What the rules' differences do to real decisions (the gates do not say).
                "outcomes": outcome_preview(before, after) if before.pk != after.pk else None,
                "outcomes_latest": OUTCOMES_LATEST,
                "outcomes_budget": f"{OUTCOMES_BUDGET:g}",
            },
        )
