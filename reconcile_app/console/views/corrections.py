"""A correction's report: both ledger entries, the reason and actor, and everything downstream
of the corrected entry to review (tainted snapshots first)."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.cache import patch_vary_headers
from django.views import View

from reconcile_app.console.mixins import HtmxPartialMixin, StaffRequiredMixin
from reconcile_app.console.views.blast_radius import BLAST_REGION_TEMPLATE, blast_context
from reconcile_app.selectors.audit import object_timeline
from reconcile_app.selectors.corrections import correction_detail
from reconcile_app.selectors.lineage import evidence_roots

CORRECTION_TEMPLATE = "reconcile_app/correction_detail.html"


class CorrectionDetailView(StaffRequiredMixin, HtmxPartialMixin, View):
    def get(self, request: HttpRequest, correction_id: str) -> HttpResponse:
        correction = correction_detail(correction_id=correction_id)
        if correction is None:
            raise Http404(f"no correction {correction_id}")
        roots = evidence_roots(evidence_id=correction.corrected.evidence_id)
        context = {"correction": correction, **blast_context(request, roots, correction)}
        template = BLAST_REGION_TEMPLATE if self.wants_partial() else CORRECTION_TEMPLATE
        if not self.wants_partial():
            # The correction is audited on the entry it corrects (services/corrections.py).
            context["timeline"] = object_timeline(
                object_kind="evidence", object_ref=correction.corrected.evidence_id
            )
        response = TemplateResponse(request, template, context)
        patch_vary_headers(response, ("HX-Request",))
        return response
