"""The sandbox's owner contract, mounted at /api/v1/sandbox/ by config/urls.py."""

from __future__ import annotations

from django.urls import path

from sandbox_app.api import event_views, views

urlpatterns = [
    path(
        "<slug:source>/events", event_views.SandboxEventsView.as_view(), name="api-sandbox-events"
    ),
    path(
        "<slug:source>/effects",
        event_views.SandboxEffectsView.as_view(),
        name="api-sandbox-effects",
    ),
    path(
        "<slug:source>/effects/<str:key>",
        event_views.SandboxEffectDetailView.as_view(),
        name="api-sandbox-effect",
    ),
    path(
        "<slug:source>/authority/<str:fact_key>",
        views.SandboxAuthorityView.as_view(),
        name="api-sandbox-authority",
    ),
    path(
        "<slug:source>/records/<str:subject>/<str:field>",
        views.SandboxRecordView.as_view(),
        name="api-sandbox-record",
    ),
    path("<slug:source>/faults", views.SandboxFaultsView.as_view(), name="api-sandbox-faults"),
]
