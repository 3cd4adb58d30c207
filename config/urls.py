from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularSwaggerSplitView

from config.health import healthz, readyz
from reconcile_app.api.schema_view import SchemaView
from reconcile_app.api.views.metrics import PrometheusMetricsView
from reconcile_app.console.login import ThrottledLoginView

# No Django admin is served: the product registers no model in it, its user and group pages
# would grant roles outside the audited services, and its login would be a second sign-in
# form outside the console's lockout.
urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("accounts/login/", ThrottledLoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/schema/", SchemaView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/v1/lineage/", include("lineage_app.urls")),
    path("api/v1/sandbox/", include("sandbox_app.api.urls")),
    path("api/v1/", include("reconcile_app.api.urls")),
    path("metrics", PrometheusMetricsView.as_view(), name="metrics"),
    path("", include("lineage_app.console_urls")),
    path("", include("reconcile_app.console.urls")),
    path("", include("drills_app.urls")),
]

# Console pages and everything the API's middleware did not answer: a 503 page for a database
# or cache out of reach, a 500 page otherwise, never Django's bare one; a request Django
# refuses before any view (400) is problem+json on the API.
handler500 = "reconcile_app.server_errors.server_error"
handler400 = "reconcile_app.server_errors.bad_request"
