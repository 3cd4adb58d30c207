"""Every problem the API answers, in any test, is one the committed schema declares.

`DeclaredProblems` is a test-only middleware (installed by tests/conftest.py): for each
problem+json answer under /api/, it looks the operation up in docs/openapi.yaml and fails the
request — so the test — when the status or the `code` is not among those the operation lists
(`x-problem-codes`). The whole suite thereby checks the schema's promise to client authors:
these are the codes each operation can answer. The schemathesis run uses the same check.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "docs" / "openapi.yaml"
REGENERATE = "python manage.py spectacular --file docs/openapi.yaml --validate"
CONVERTER = re.compile(r"<(?:\w+:)?(\w+)>")


@cache
def operations() -> dict[tuple[str, str], dict[str, Any]]:
    """(method, path template) → the operation, from the committed schema."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    schema = yaml.load(SCHEMA_PATH.read_text(), Loader=loader)  # a safe loader
    return {
        (method.upper(), path): operation
        for path, methods in schema["paths"].items()
        for method, operation in methods.items()
    }


def route_template(path: str) -> str | None:
    """The schema's path template for a request path (`/api/v1/effects/{key}`), if routed."""
    try:
        match = resolve(path)
    except Resolver404:
        return None
    return "/" + CONVERTER.sub(r"{\1}", match.route)


def undeclared(method: str, path: str, status: int, code: str | None) -> str | None:
    """Why this answer breaks the schema's promise, or None when the schema declares it."""
    template = route_template(path)
    operation = operations().get((method, template)) if template else None
    if operation is None:
        return None  # not an operation of the schema (a 405, an unknown route, the docs)
    response = operation["responses"].get(str(status))
    name = operation["operationId"]
    if response is None:
        return f"{method} {template} ({name}) answered {status}, which it does not declare"
    if code not in response.get("x-problem-codes", []):
        return (
            f"{method} {template} ({name}) answered {status} `{code}`, which docs/openapi.yaml "
            f"does not list for that status: declare it in the view's problems and run "
            f"`{REGENERATE}`"
        )
    return None


class DeclaredProblems:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if request.path.startswith("/api/") and response.get("Content-Type", "").startswith(
            "application/problem+json"
        ):
            try:
                code = json.loads(response.content).get("code")
            except (ValueError, AttributeError):
                code = None
            # A crash (500 `internal_error`) is never declared: the test that meets one fails
            # on its own account, and some provoke one on purpose.
            if code != "internal_error":
                problem = undeclared(
                    request.method or "GET", request.path, response.status_code, code
                )
                if problem is not None:
                    raise AssertionError(problem)
        return response
