"""OpenAPI extensions: document the bearer-key scheme for drf-spectacular."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class BearerKeyScheme(OpenApiAuthenticationExtension):
    target_class = "reconcile_app.api.authentication.BearerKeyAuthentication"
    name = "bearerKey"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An agent key (create_principal) or a person's token (create_user).",
        }
