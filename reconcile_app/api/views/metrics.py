"""Live metrics: `GET /api/v1/metrics` (JSON) and `GET /metrics` (Prometheus text format, with
request latency histograms: reconcile_app/api/prometheus.py).

Both are for people in any role (operator, reviewer, auditor), by session or personal bearer
token. `/metrics` also accepts `Authorization: Bearer <RECONCILE_METRICS_TOKEN>` when that
variable is set, so a Prometheus scraper needs no personal account; without it, the token
path is off. Agents get 403 on both: operational figures are not theirs to read.
"""

from __future__ import annotations

import hmac
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.http import HttpResponse
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.types import OpenApiTypes
from rest_framework import authentication
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.env import env_str
from reconcile_app.api.authentication import BearerKeyAuthentication, bearer_credentials
from reconcile_app.api.metrics_serializers import OperationalMetricsOutput
from reconcile_app.api.openapi import api_operation, query_int
from reconcile_app.api.permissions import PeopleOnly
from reconcile_app.api.prometheus import CONTENT_TYPE, prometheus_exposition
from reconcile_app.errors import ValidationFailed
from reconcile_app.selectors.metrics import MAX_WINDOW_HOURS, operational_metrics


def metrics_token() -> str:
    """RECONCILE_METRICS_TOKEN (settings first, then the environment); empty means off.
    Without surrounding whitespace: a token read from a secret file ends in a newline, which
    no Authorization header carries, so the scraper was refused with the right token."""
    configured = getattr(settings, "RECONCILE_METRICS_TOKEN", None)
    token = configured if configured is not None else env_str("METRICS_TOKEN", "")
    return str(token).strip()


class MetricsScrape:
    """The `request.auth` of a scrape authenticated by the metrics token (no principal)."""


class MetricsTokenAuthentication(authentication.BaseAuthentication):
    """Accepts exactly the metrics token; any other bearer falls through to the key check."""

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        token = metrics_token()
        presented = bearer_credentials(request)
        if not token or not presented:
            return None
        if not hmac.compare_digest(presented.encode(), token.encode()):
            return None
        return AnonymousUser(), MetricsScrape()

    def authenticate_header(self, request: Request) -> str:
        return "Bearer"


class MetricsTokenScheme(OpenApiAuthenticationExtension):
    target_class = "reconcile_app.api.views.metrics.MetricsTokenAuthentication"
    name = "metricsToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "RECONCILE_METRICS_TOKEN, for Prometheus scrapers (when it is set).",
        }


class PeopleOrMetricsToken(BasePermission):
    """The metrics token, or a person in a role; agents are refused (`people_only`)."""

    def has_permission(self, request: Any, view: Any) -> bool:
        return isinstance(request.auth, MetricsScrape) or PeopleOnly().has_permission(request, view)


class FirstRenderer(BaseContentNegotiation):
    """Scrapers send `Accept: application/openmetrics-text, text/plain;version=0.0.4`; the
    exposition is the answer whatever they ask for, and errors stay problem+json."""

    # Read by the schema class: an operation that never answers 406 does not declare it.
    refuses_unacceptable = False

    def select_renderer(self, request: Any, renderers: Any, format_suffix: Any = None) -> Any:
        return renderers[0], renderers[0].media_type

    def select_parser(self, request: Any, parsers: Any) -> Any:
        return parsers[0] if parsers else None


def _window(raw: str | None) -> int:
    if raw is None or raw == "":
        return 24
    try:
        hours = int(raw)
    except ValueError as exc:
        raise ValidationFailed("hours must be an integer", code="invalid_hours") from exc
    if not 1 <= hours <= MAX_WINDOW_HOURS:
        raise ValidationFailed(
            f"hours must be between 1 and {MAX_WINDOW_HOURS}", code="invalid_hours"
        )
    return hours


class MetricsView(APIView):
    """Operational figures: unknown outcomes and their age, resolution time, refusals by
    reason, decisions / verdicts / latency per hour, open escalations and contradictions,
    active quarantines, the last drill."""

    permission_classes = [PeopleOnly]

    @api_operation(
        operation_id="metrics_get",
        summary="Operational figures as JSON",
        tag="metrics",
        parameters=[
            query_int(
                "hours",
                1,
                MAX_WINDOW_HOURS,
                f"the window, 1-{MAX_WINDOW_HOURS} hours (default 24); else 400 `invalid_hours`",
            )
        ],
        responses={200: OperationalMetricsOutput},
        problems={400: ["invalid_hours"], 403: ["people_only"]},
    )
    def get(self, request: Request) -> Response:
        hours = _window(request.query_params.get("hours"))
        return Response(operational_metrics(hours=hours))


class PrometheusMetricsView(APIView):
    authentication_classes = [
        MetricsTokenAuthentication,
        BearerKeyAuthentication,
        authentication.SessionAuthentication,
    ]
    permission_classes = [PeopleOrMetricsToken]
    content_negotiation_class = FirstRenderer

    def get_throttles(self) -> list[Any]:
        # A scraper holding the metrics token is not anonymous traffic: counted at the
        # anonymous rate per address, Prometheus polling several web hosts from one address
        # (with the schema's readers beside it) drew 429s, and a failed scrape is an alert.
        if isinstance(self.request.auth, MetricsScrape):
            return []
        return super().get_throttles()

    @api_operation(
        operation_id="metrics_prometheus",
        summary="Operational figures for Prometheus",
        tag="metrics",
        description="The Prometheus text exposition of the last 24 hours' figures and the "
        "request latency histograms by route, method and status: for people in a role, or "
        "`Authorization: Bearer $RECONCILE_METRICS_TOKEN` when it is set.",
        responses={(200, "text/plain"): OpenApiTypes.STR},
        problems={403: ["people_only"]},
    )
    def get(self, request: Request) -> HttpResponse:
        return HttpResponse(prometheus_exposition(), content_type=CONTENT_TYPE)
