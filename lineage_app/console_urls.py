"""Lineage's console page, the explorer at /lineage/; the host project mounts it (reconcile:
at the console's root, beside the pages a node's click opens)."""

from __future__ import annotations

from django.urls import path

from lineage_app.console import views

urlpatterns = [
    path("lineage/", views.LineageExplorerView.as_view(), name="console-lineage"),
]
