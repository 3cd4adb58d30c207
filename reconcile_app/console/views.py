from __future__ import annotations

from django.contrib.auth.mixins import LoginRequiredMixin
from django.views.generic import RedirectView, TemplateView


class HomeView(LoginRequiredMixin, RedirectView):
    pattern_name = "console-snapshots"


class SnapshotListView(LoginRequiredMixin, TemplateView):
    template_name = "reconcile_app/snapshot_list.html"


class SnapshotDetailView(LoginRequiredMixin, TemplateView):
    template_name = "reconcile_app/snapshot_detail.html"


class ContradictionListView(LoginRequiredMixin, TemplateView):
    template_name = "reconcile_app/contradiction_list.html"
