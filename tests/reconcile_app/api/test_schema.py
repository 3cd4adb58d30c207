"""The OpenAPI schema is one a good client can be generated from (docs/api.md, "The schema").

docs/openapi.yaml is committed: what client authors generate from, and what the rest of the
suite checks problem codes against (tests/openapi_conformance.py). These tests keep it true
to the code and keep its promises: every operation named, summarised and tagged, every
response typed, every error answer's codes listed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import call_command

from reconcile_app.api.openapi import PROBLEM_CODES, TAGS
from tests.openapi_conformance import REGENERATE, SCHEMA_PATH, operations

OPERATION_ID = re.compile(r"^[a-z][a-z0-9_]*$")


def committed() -> dict[str, Any]:
    return yaml.safe_load(SCHEMA_PATH.read_text())


def refers_to(schema: dict[str, Any], component: str) -> bool:
    """The schema is the component, directly or wrapped (nullable: allOf / oneOf)."""
    refs = [schema.get("$ref")] + [
        item.get("$ref") for key in ("allOf", "oneOf") for item in schema.get(key, [])
    ]
    return f"#/components/schemas/{component}" in refs


def test_the_committed_schema_is_what_the_code_generates(tmp_path: Path) -> None:
    generated = tmp_path / "openapi.yaml"
    call_command("spectacular", file=str(generated), validate=True, fail_on_warn=True)
    assert generated.read_text() == SCHEMA_PATH.read_text(), (
        f"docs/openapi.yaml is out of date with the code: run `{REGENERATE}` and commit it"
    )


def test_every_operation_is_named_summarised_and_tagged_by_resource() -> None:
    seen: set[str] = set()
    for (method, path), operation in operations().items():
        where = f"{method} {path}"
        name = operation.get("operationId", "")
        assert OPERATION_ID.match(name), where
        assert name not in seen, f"{where}: operationId {name} is used twice"
        seen.add(name)
        assert operation.get("summary"), where
        assert operation.get("description"), where
        assert len(operation.get("tags", [])) == 1, where
        assert operation["tags"][0] in TAGS, where
    assert {tag["name"] for tag in committed()["tags"]} == set(TAGS)


def test_the_commit_does_not_borrow_the_list_views_docstring() -> None:
    commit = operations()[("POST", "/api/v1/effects")]
    listing = operations()[("GET", "/api/v1/effects")]
    assert commit["operationId"] == "effect_commit"
    assert commit["description"] != listing["description"]
    assert "Idempotency-Key" in commit["description"]


def test_every_answer_has_a_typed_body() -> None:
    for (method, path), operation in operations().items():
        for status, response in operation["responses"].items():
            where = f"{method} {path} {status}"
            content = response.get("content")
            assert content, f"{where}: no body declared"
            for media, declared in content.items():
                schema = declared.get("schema", {})
                untyped = schema in ({}, {"type": "object", "additionalProperties": {}})
                # PROV-JSON is a document of its own standard: an object, said as such.
                assert not untyped or (media == "application/json" and path.endswith("/prov")), (
                    where
                )


def test_every_error_answer_lists_its_problem_codes() -> None:
    for (method, path), operation in operations().items():
        for status, response in operation["responses"].items():
            if not status.startswith(("4", "5")):
                continue
            where = f"{method} {path} {status}"
            assert response.get(PROBLEM_CODES), where
            assert list(response["content"]) == ["application/problem+json"], where
            for code in response[PROBLEM_CODES]:
                assert f"`{code}`" in response["description"], where


def test_receipt_and_outcome_are_typed() -> None:
    effect = committed()["components"]["schemas"]["Effect"]["properties"]
    assert refers_to(effect["receipt"], "Receipt")
    assert refers_to(effect["outcome"], "Outcome")
    assert refers_to(effect["status"], "EffectStatusEnum")


@pytest.mark.parametrize(
    ("component", "field", "enum"),
    [
        ("FieldRead", "status", "FieldStatusEnum"),
        ("ClaimVerdict", "verdict", "VerdictEnum"),
        ("Decision", "result", "DecisionResultEnum"),
        ("Snapshot", "completeness", "CompletenessEnum"),
        ("Escalation", "status", "EscalationStatusEnum"),
        ("Memory", "status", "MemoryStatusEnum"),
        ("Me", "kind", "PrincipalKindEnum"),
    ],
)
def test_closed_sets_are_named_enums(component: str, field: str, enum: str) -> None:
    schemas = committed()["components"]["schemas"]
    assert refers_to(schemas[component]["properties"][field], enum)
    assert not any(re.search(r"\d+Enum$", name) for name in schemas), "an unnamed enum"


def test_headers_and_limits_are_declared() -> None:
    commit = operations()[("POST", "/api/v1/effects")]
    headers = {p["name"]: p for p in commit["parameters"] if p["in"] == "header"}
    assert headers["Idempotency-Key"]["schema"]["maxLength"] == 200
    assert headers["If-Match"]["required"] is True
    assert "Idempotent-Replayed" in commit["responses"]["200"]["headers"]
    assert "Retry-After" in commit["responses"]["503"]["headers"]
    assert "Retry-After" in commit["responses"]["409"]["headers"]
    sandbox = operations()[("POST", "/api/v1/sandbox/{source}/effects")]
    assert {"Idempotency-Key", "If-Match"} <= {p["name"] for p in sandbox["parameters"]}
    assert "ETag" in sandbox["responses"]["201"]["headers"]
    fact = operations()[("GET", "/api/v1/facts/{fact_key}/current")]
    on = next(p for p in fact["parameters"] if p["name"] == "on")
    assert on["schema"]["format"] == "date"
    metrics = operations()[("GET", "/api/v1/metrics")]
    hours = next(p for p in metrics["parameters"] if p["name"] == "hours")
    assert (hours["schema"]["minimum"], hours["schema"]["maximum"]) == (1, 168)
    listing = operations()[("GET", "/api/v1/snapshots")]
    page = next(p for p in listing["parameters"] if p["name"] == "page")
    assert page["schema"]["minimum"] == 1
    memory = committed()["components"]["schemas"]["MemoryRequest"]["properties"]
    assert memory["derived_from"]["minItems"] == 1


def test_the_schema_is_served_as_json_on_request(db: Any, client: Any) -> None:
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    assert "json" in response["Content-Type"]
    assert json.loads(response.content)["openapi"].startswith("3.")
    default = client.get("/api/schema/")
    assert default.status_code == 200
    assert yaml.safe_load(default.content)["openapi"].startswith("3.")
