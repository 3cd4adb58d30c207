from __future__ import annotations

from django.urls import path

from reconcile_app.console import views

urlpatterns = [
    path("", views.HomeView.as_view(), name="console-home"),
    path("snapshots/", views.SnapshotListView.as_view(), name="console-snapshots"),
    path(
        "snapshots/<str:snapshot_id>/",
        views.SnapshotDetailView.as_view(),
        name="console-snapshot",
    ),
    path(
        "contradictions/",
        views.ContradictionListView.as_view(),
        name="console-contradictions",
    ),
    path(
        "contradictions/<int:contradiction_id>/resolve/",
        views.ContradictionResolveView.as_view(),
        name="console-contradiction-resolve",
    ),
]
