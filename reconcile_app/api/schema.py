"""The OpenAPI schema's bearer scheme and postprocessing (docs/api.md, "The schema").

The postprocessing hook gives every error response its problem codes (`x-problem-codes`, see
reconcile_app.api.openapi), a problem+json body and, where retrying helps, a `Retry-After`
header; and it lists the tags with their descriptions. Component names: autoschema.py; the
schema endpoint: schema_view.py.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from drf_spectacular.drainage import warn
from drf_spectacular.extensions import OpenApiAuthenticationExtension

from reconcile_app.api.autoschema import ANSWERS_ANY_ACCEPT
from reconcile_app.api.openapi import PROBLEM_CODES, TAGS


class BearerKeyScheme(OpenApiAuthenticationExtension):
    target_class = "reconcile_app.api.authentication.BearerKeyAuthentication"
    name = "bearerKey"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An agent key (create_principal) or a person's token (create_user).",
        }


PROBLEM_MEDIA = "application/problem+json"
PROBLEM_REF = {"$ref": "#/components/schemas/Problem"}
# Codes any operation can answer, whatever it does: no or bad credentials, an Accept header
# that rules out JSON, a chunked body (bodies are read by their length), a body over the size
# limit (decided on Content-Length, for any method), the rate limit, a database or a shared
# cache that cannot be reached, a request Django refuses before any view (a Host not
# allowed, over 1,000 query parameters), and one gunicorn refuses before Django sees it
# (config/gunicorn_errors.py: a request line or header that is not HTTP, a request line or
# headers over its limits, an `Expect` other than 100-continue).
COMMON_CODES: dict[str, list[str]] = {
    "400": ["invalid_request", "malformed_request"],
    "401": ["authentication_failed", "not_authenticated"],
    "406": ["not_acceptable"],
    "411": ["length_required"],
    "413": ["payload_too_large"],
    "414": ["request_line_too_long"],
    "417": ["expectation_failed"],
    "429": ["throttled"],
    "431": ["request_headers_too_large"],
    "503": ["cache_unavailable", "database_unavailable"],
}
# ... and those of an operation that takes a JSON body, or parameters (a filter that cannot
# be applied, a NUL character in a path or query string).
BODY_CODES: dict[str, list[str]] = {
    "400": ["invalid_request", "malformed_json"],
    "415": ["unsupported_media_type"],
}
PARAMETER_CODES: dict[str, list[str]] = {"400": ["invalid_request"]}
# A page past the end of a list.
PAGE_CODES: dict[str, list[str]] = {"404": ["not_found"]}
# What the host adds to another app's operations: lineage is guarded by the host's
# permission (settings.LINEAGE_API_PERMISSION_CLASSES: people in a role).
TAG_CODES: dict[str, dict[str, list[str]]] = {"lineage": {"403": ["people_only"]}}
# Where retrying the same request later can succeed, the answer says when (seconds).
RETRY_AFTER_CODES = {
    "throttled": "the rate limit, or too many invalid keys from this address",
    "idempotency_key_in_use": "the first request with this key is still in flight",
    "owner_unavailable": "the owner could not be reached; nothing was executed",
    "not_sent": "the effect was recorded and never sent; retry with the same key",
    "current_authority_unavailable": "the owner did not answer (none when it answered "
    "without an owner, or keeps no history: a retry would not change that)",
    "database_unavailable": "nothing was written (a commit whose body names its "
    "`idempotency_key`: recorded, retry with that key)",
    "cache_unavailable": "nothing was written",
    "broker_unavailable": "the task queue refused the check; nothing was recorded",
    "source_quarantined": "sent when the quarantine has an end (`ends_at`)",
}


def _merge(into: dict[str, set[str]], extra: dict[str, list[str]]) -> None:
    for status, codes in extra.items():
        into.setdefault(status, set()).update(codes)


def _operation_codes(operation: dict[str, Any]) -> dict[str, set[str]]:
    codes: dict[str, set[str]] = {}
    _merge(codes, operation.pop(PROBLEM_CODES, {}))
    _merge(codes, COMMON_CODES)
    if operation.pop(ANSWERS_ANY_ACCEPT, False):
        codes.pop("406")
    parameters = operation.get("parameters", [])
    if "requestBody" in operation:
        _merge(codes, BODY_CODES)
    if any(parameter["in"] in ("query", "path") for parameter in parameters):
        _merge(codes, PARAMETER_CODES)
    if any(parameter["name"] == "page" for parameter in parameters):
        _merge(codes, PAGE_CODES)
    for tag in operation.get("tags", []):
        _merge(codes, TAG_CODES.get(tag, {}))
    return codes


def _problem_response(status: str, codes: set[str], response: dict[str, Any]) -> dict[str, Any]:
    listed = sorted(codes)
    phrase = HTTPStatus(int(status)).phrase
    content: dict[str, Any] = response.get("content") or {}
    media: dict[str, Any] = next(iter(content.values()), {})
    schema = media.get("schema", PROBLEM_REF)
    shaped: dict[str, Any] = {
        "description": f"{phrase}: " + ", ".join(f"`{code}`" for code in listed),
        "content": {PROBLEM_MEDIA: {"schema": schema}},
        PROBLEM_CODES: listed,
    }
    headers = dict(response.get("headers") or {})
    retrying = [code for code in listed if code in RETRY_AFTER_CODES]
    if retrying:
        headers["Retry-After"] = {
            "description": "Seconds to wait before retrying: "
            + "; ".join(f"`{code}`: {RETRY_AFTER_CODES[code]}" for code in retrying),
            "schema": {"type": "integer", "minimum": 0},
        }
    if headers:
        shaped["headers"] = dict(sorted(headers.items()))
    return shaped


def _enum_refs(result: dict[str, Any]) -> dict[frozenset[str], dict[str, str]]:
    """The named enums (components) by their set of values."""
    return {
        frozenset(schema["enum"]): {"$ref": f"#/components/schemas/{name}"}
        for name, schema in result.get("components", {}).get("schemas", {}).items()
        if "enum" in schema
    }


def _named_enum(schema: dict[str, Any], refs: dict[frozenset[str], dict[str, str]]) -> None:
    """A filter's choices refer to the enum of the field it filters (`?status=` takes an
    EffectStatusEnum), so a client has one type for both."""
    for holder in (schema, schema.get("items")):
        if isinstance(holder, dict) and "enum" in holder:
            ref = refs.get(frozenset(holder["enum"]))
            if ref is not None:
                description = holder.get("description")
                holder.clear()
                holder.update(ref)
                if description:
                    holder["description"] = description


def document_problems(result: dict[str, Any], generator: Any, request: Any, public: Any) -> Any:
    """drf-spectacular postprocessing hook: every error response is problem+json with the
    codes it can carry (`x-problem-codes`), filters use the named enums, and the tags are
    listed with their descriptions."""
    result["tags"] = [{"name": name, "description": text} for name, text in TAGS.items()]
    refs = _enum_refs(result)
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            for parameter in operation.get("parameters", []):
                _named_enum(parameter.get("schema", {}), refs)
            responses = operation.setdefault("responses", {})
            for status, codes in _operation_codes(operation).items():
                responses[status] = _problem_response(status, codes, responses.get(status, {}))
            for status, response in list(responses.items()):
                if status.startswith(("4", "5")) and PROBLEM_CODES not in response:
                    # An error answer whose codes nobody declared: say so (a warning fails
                    # `spectacular --fail-on-warn` and `check --deploy`), keep the schema.
                    warn(f"{operation.get('operationId')}: {status} declares no problem code")
            operation["responses"] = dict(sorted(responses.items()))
    return result
