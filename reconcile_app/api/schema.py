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


PROBLEM_SCHEMA = {
    "type": "object",
    "description": "RFC 9457 problem details; `code` is stable and machine-readable.",
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "code": {"type": "string"},
    },
    "required": ["type", "title", "status", "detail", "code"],
    "additionalProperties": True,
}
# Every operation can answer these, whatever its own errors: bad input, no or bad
# credentials, a role that may not, an unknown id or page, a throttle.
COMMON_ERRORS = {
    "400": "Invalid request",
    "401": "Not authenticated",
    "403": "Forbidden",
    "404": "Not found",
    "413": "Payload too large",
    "429": "Throttled",
}
# Every write can also be refused for its content: a value over 64 KiB, say.
WRITE_ERRORS = {"422": "Unprocessable: a value over the limit, or a rule of the request's own"}
PROBLEM_MEDIA = "application/problem+json"


def document_problems(result: dict[str, Any], generator: Any, request: Any, public: Any) -> Any:
    """drf-spectacular postprocessing hook: every error response is documented problem+json."""
    components = result.setdefault("components", {}).setdefault("schemas", {})
    components["Problem"] = PROBLEM_SCHEMA
    reference = {"$ref": "#/components/schemas/Problem"}
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            responses = operation.setdefault("responses", {})
            errors = {**COMMON_ERRORS, **(WRITE_ERRORS if method in ("post", "put") else {})}
            for status, description in errors.items():
                responses.setdefault(status, {"description": description})
            for status, response in responses.items():
                if status.startswith(("4", "5")):
                    response["content"] = {PROBLEM_MEDIA: {"schema": reference}}
    return result
