"""`GET /api/schema/`: the OpenAPI schema, YAML by default, JSON with `?format=json` (or by
content negotiation, `Accept: application/vnd.oai.openapi+json`)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.views import SpectacularAPIView
from rest_framework.negotiation import DefaultContentNegotiation


class SchemaFormatNegotiation(DefaultContentNegotiation):
    """`?format=json|yaml` picks the format. The project turns DRF's query override off
    everywhere else (`URL_FORMAT_OVERRIDE: None`: `format` belongs to the PROV export)."""

    def select_renderer(self, request: Any, renderers: Any, format_suffix: Any = None) -> Any:
        return super().select_renderer(
            request, renderers, format_suffix or request.query_params.get("format")
        )


class SchemaView(SpectacularAPIView):
    content_negotiation_class = SchemaFormatNegotiation
