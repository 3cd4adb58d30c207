"""The console's drills pages, mounted at the console's root by config/urls.py."""

from __future__ import annotations

from django.urls import path

from drills_app import views

urlpatterns = [
    path("drills/", views.DrillsPageView.as_view(), name="console-drills"),
    path("drills/compare/", views.DrillCompareView.as_view(), name="console-drill-compare"),
    path("drills/<int:run_id>/", views.DrillRunView.as_view(), name="console-drill"),
    path(
        "drills/<int:run_id>/status/",
        views.DrillRunStatusView.as_view(),
        name="console-drill-status",
    ),
]
