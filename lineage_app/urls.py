from __future__ import annotations

from django.urls import path

from lineage_app import api

urlpatterns = [
    path("blast-radius", api.BlastRadiusView.as_view(), name="api-blast-radius"),
    path(
        "<path:node>/descendants",
        api.ReachView.as_view(direction="descendants"),
        name="api-lineage-descendants",
    ),
    path(
        "<path:node>/ancestors",
        api.ReachView.as_view(direction="ancestors"),
        name="api-lineage-ancestors",
    ),
    path("<path:node>/prov", api.ProvView.as_view(), name="api-lineage-prov"),
]
