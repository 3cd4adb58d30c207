"""An evidence entry's page (its hash chain, corrections and lineage) and the operators'
"Correct this entry" action."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.views import View

from reconcile_app.choices import Role
from reconcile_app.console.forms.evidence import CorrectionForm
from reconcile_app.console.mixins import OperatorRequiredMixin, StaffRequiredMixin, not_found_is_404
from reconcile_app.console.node_links import node_url
from reconcile_app.errors import DomainError
from reconcile_app.request_id import request_id_of
from reconcile_app.roles import has_role
from reconcile_app.selectors.audit import object_timeline
from reconcile_app.selectors.evidence import evidence_detail
from reconcile_app.services.corrections import correction_create
from reconcile_app.services.references import split_reference

EVIDENCE_TEMPLATE = "reconcile_app/evidence_detail.html"


def evidence_page(
    request: HttpRequest,
    evidence_id: str,
    *,
    status: int = 200,
    form: CorrectionForm | None = None,
    error: DomainError | None = None,
) -> HttpResponse:
    with not_found_is_404():
        detail = evidence_detail(evidence_id=evidence_id)
    context = {
        "detail": detail,
        "entry": detail.entry,
        # (reference as recorded, where it opens)
        "derived_from": [
            (reference, node_url(*split_reference(reference)))
            for reference in detail.entry.derived_from
        ],
        "can_correct": has_role(request.user, Role.OPERATOR) and detail.correction is None,
        "form": form or CorrectionForm(),
        "form_error": error,
        "timeline": object_timeline(object_kind="evidence", object_ref=evidence_id),
    }
    return TemplateResponse(request, EVIDENCE_TEMPLATE, context, status=status)


class EvidenceDetailView(StaffRequiredMixin, View):
    def get(self, request: HttpRequest, evidence_id: str) -> HttpResponse:
        return evidence_page(request, evidence_id)


class EvidenceCorrectView(OperatorRequiredMixin, View):
    """An operator corrects an entry: the service appends the correction, taints what is
    downstream and audits it; the page that lists what to review opens next."""

    def post(self, request: HttpRequest, evidence_id: str) -> HttpResponse:
        form = CorrectionForm(request.POST)
        if not form.is_valid():
            text = " ".join(str(message) for errors in form.errors.values() for message in errors)
            error = DomainError(text, code="invalid_request")
            return evidence_page(request, evidence_id, status=400, form=form, error=error)
        try:
            with not_found_is_404():
                correction = correction_create(
                    evidence_id=evidence_id,
                    reason=form.cleaned_data["reason"],
                    actor=request.user,
                    replacement=form.cleaned_data["replacement"],
                    # Same id as the access log and the X-Request-ID response header.
                    request_id=request_id_of(request),
                )
        except DomainError as exc:
            return evidence_page(request, evidence_id, status=exc.status, form=form, error=exc)
        verb = "superseded" if form.cleaned_data["replacement"] else "revoked"
        messages.success(request, f"{evidence_id} {verb} by {correction.correction_id}.")
        return redirect("console-correction", correction_id=correction.correction_id)
