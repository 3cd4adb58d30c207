"""The hand-written client is typed against the OpenAPI schema: every field a model reads
is a property of the schema's component for that answer, and every value an enumerated
property may take is one the model's type names. Checked against the schema the app serves
and, when it is committed, docs/openapi.yaml.

A component the schema leaves untyped (no properties) cannot be checked; only the owner's
receipt may be one (docs/api.md lets owners add to it), and once the schema types it, it is
checked like the rest.
"""

from __future__ import annotations

import dataclasses
import json
import re
import types
import typing
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.test import Client
from reconcile_client import models

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = ("post", "/api/v1/reconcile", "201")
EFFECT = ("get", "/api/v1/effects/{}", "200")
ME = ("get", "/api/v1/me", "200")

# (model, the answer it is read from, the way from the answer's body down to it: a property
# name, "[]" for a list's items, "{}" for a map's values).
READS: list[tuple[type, tuple[str, str, str], tuple[str, ...]]] = [
    (models.Snapshot, SNAPSHOT, ()),
    (models.Decision, SNAPSHOT, ("decision",)),
    (models.Reason, SNAPSHOT, ("decision", "reasons", "[]")),
    (models.FieldRead, SNAPSHOT, ("fields", "{}")),
    (models.ClaimVerdict, SNAPSHOT, ("claims", "[]")),
    (models.Contradiction, SNAPSHOT, ("contradictions", "[]")),
    (models.ContradictionSide, SNAPSHOT, ("contradictions", "[]", "state")),
    (models.ActionHandle, SNAPSHOT, ("actions", "{}")),
    (models.ManifestEntry, SNAPSHOT, ("evidence_manifest", "[]")),
    (models.Snapshot, ("get", "/api/v1/snapshots/{}", "200"), ()),
    (models.Effect, EFFECT, ()),
    (models.EffectEvent, EFFECT, ("timeline", "[]")),
    (models.Receipt, EFFECT, ("receipt",)),
    (models.Effect, ("post", "/api/v1/effects", "201"), ()),
    (models.Effect, ("post", "/api/v1/effects", "202"), ()),
    (models.Memory, ("post", "/api/v1/memories", "201"), ()),
    (models.Memory, ("get", "/api/v1/memories", "200"), ("results", "[]")),
    (models.Evidence, ("post", "/api/v1/evidence", "201"), ()),
    (models.Escalation, ("get", "/api/v1/escalations/{}", "200"), ()),
    (models.Fact, ("get", "/api/v1/facts/{}/current", "200"), ()),
    (models.Memory, ("get", "/api/v1/facts/{}/current", "200"), ("fact",)),
    (models.Replay, ("post", "/api/v1/snapshots/{}/replay", "200"), ()),
    (
        models.ReplayDifference,
        ("post", "/api/v1/snapshots/{}/replay", "200"),
        ("differences", "[]"),
    ),
    (models.Me, ME, ()),
    (models.DecisionClass, ME, ("decision_classes", "[]")),
]
MAY_BE_UNTYPED = {models.Receipt}
# Read only from the answers that carry them (an effect's timeline: GET effects/{key}).
ONLY_SOMETIMES = {"timeline"}


@pytest.fixture(scope="module")
def schemas() -> list[tuple[str, dict[str, Any]]]:
    """The served schema (generated once for the module: it takes a while) and the committed
    one when there is one."""
    answer = Client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert answer.status_code == 200
    text = answer.content.decode()
    served = json.loads(text) if text.lstrip().startswith("{") else yaml.safe_load(text)
    found = [("served /api/schema/", served)]
    committed = ROOT / "docs" / "openapi.yaml"
    if committed.exists():
        found.append(("docs/openapi.yaml", yaml.safe_load(committed.read_text())))
    return found


def resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """Follow $ref, and through allOf / oneOf / anyOf to the object among them."""
    while True:
        if "$ref" in node:
            node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
        elif "allOf" in node or "oneOf" in node or "anyOf" in node:
            options = node.get("allOf") or node.get("oneOf") or node.get("anyOf") or []
            objects = [resolve(schema, option) for option in options]
            typed = [option for option in objects if option.get("type") != "null"]
            node = {**node, **typed[0]} if typed else {}
            for key in ("allOf", "oneOf", "anyOf"):
                node.pop(key, None)
        else:
            return node


def answer_body(schema: dict[str, Any], method: str, path: str, status: str) -> dict[str, Any]:
    pattern = re.escape(path).replace(r"\{\}", r"\{[^}]+\}")
    matches = [name for name in schema["paths"] if re.fullmatch(pattern, name)]
    assert len(matches) == 1, (path, matches)
    response = schema["paths"][matches[0]][method]["responses"][status]
    return resolve(schema, response["content"]["application/json"]["schema"])


def descend(schema: dict[str, Any], node: dict[str, Any], way: tuple[str, ...]) -> dict[str, Any]:
    for step in way:
        if step == "[]":
            node = resolve(schema, node["items"])
        elif step == "{}":
            node = resolve(schema, node["additionalProperties"])
        else:
            assert step in node.get("properties", {}), (step, sorted(node.get("properties", {})))
            node = resolve(schema, node["properties"][step])
    return node


def wire_fields(model: type) -> list[dataclasses.Field[Any]]:
    return [
        field
        for field in dataclasses.fields(model)
        if field.metadata.get("wire", True) and field.name not in ONLY_SOMETIMES
    ]


def literal_values(annotation: Any) -> set[str] | None:
    """The values a Literal (possibly inside `| None`) admits; None if it is no Literal."""
    if typing.get_origin(annotation) is typing.Literal:
        return {str(value) for value in typing.get_args(annotation)}
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        for member in typing.get_args(annotation):
            found = literal_values(member)
            if found is not None:
                return found
    return None


@pytest.mark.parametrize(
    ("model", "answer", "way"), READS, ids=[f"{m.__name__}@{a[1]}:{a[2]}" for m, a, _ in READS]
)
def test_every_field_the_client_reads_is_in_the_schema(
    schemas: list[tuple[str, dict[str, Any]]],
    model: type,
    answer: tuple[str, str, str],
    way: tuple[str, ...],
) -> None:
    for origin, schema in schemas:
        component = descend(schema, answer_body(schema, *answer), way)
        properties = component.get("properties")
        if not properties:
            assert model in MAY_BE_UNTYPED, f"{origin}: {model.__name__} is untyped"
            continue
        hints = typing.get_type_hints(model)
        for field in wire_fields(model):
            if model is models.Effect and answer[0] == "post" and field.name in ONLY_SOMETIMES:
                continue
            assert field.name in properties, f"{origin}: {model.__name__}.{field.name}"
            declared = resolve(schema, properties[field.name]).get("enum")
            admitted = literal_values(hints[field.name])
            if declared and admitted is not None:
                unknown = {str(value) for value in declared if value is not None} - admitted
                assert not unknown, f"{origin}: {model.__name__}.{field.name} lacks {unknown}"


@pytest.mark.parametrize(
    ("model", "answer", "way"), READS, ids=[f"{m.__name__}@{a[1]}:{a[2]}" for m, a, _ in READS]
)
def test_every_property_the_schema_documents_is_typed_on_the_model(
    schemas: list[tuple[str, dict[str, Any]]],
    model: type,
    answer: tuple[str, str, str],
    way: tuple[str, ...],
) -> None:
    """The other way round: what the API documents, an agent reads as a typed attribute
    rather than digging in `.raw` (which stays for properties added after this client)."""
    named = {field.name for field in dataclasses.fields(model)}
    for origin, schema in schemas:
        component = descend(schema, answer_body(schema, *answer), way)
        untyped = set(component.get("properties", {})) - named
        assert not untyped, f"{origin}: {model.__name__} lacks {sorted(untyped)}"
