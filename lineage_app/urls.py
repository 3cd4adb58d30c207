"""The lineage API's routes; the host mounts them (reconcile: under /api/v1/lineage/)."""

from __future__ import annotations

from django.urls import path

from lineage_app.api import views

urlpatterns = [
    path("blast-radius", views.BlastRadiusView.as_view(), name="api-blast-radius"),
    path(
        "<path:node>/descendants",
        views.DescendantsView.as_view(),
        name="api-lineage-descendants",
    ),
    path(
        "<path:node>/ancestors",
        views.AncestorsView.as_view(),
        name="api-lineage-ancestors",
    ),
    path("<path:node>/prov", views.ProvView.as_view(), name="api-lineage-prov"),
]
