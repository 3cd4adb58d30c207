"""Console pages for lineage (being built)."""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.views import View

from reconcile_app.console.views import StaffRequiredMixin


class _Pending(StaffRequiredMixin, View):
    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        raise Http404("not yet")

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        raise Http404("not yet")


LineageExplorerView = BlastRadiusView = CorrectionDetailView = _Pending
EvidenceCorrectView = EvidenceDetailView = SnapshotReplayView = _Pending
