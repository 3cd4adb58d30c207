"""Lineage API: descendants, ancestors, blast radius, PROV export."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lineage_app.api.exceptions import InvalidParameter, NodeNotFound
from lineage_app.api.params import int_param, rfc3339, walk_options
from lineage_app.conf import api_permission_classes
from lineage_app.prov_export import prov_document
from lineage_app.registry import registry
from lineage_app.selectors.blast import blast_radius, roots_for_source_versions
from lineage_app.selectors.nodes import subgraph
from lineage_app.selectors.reach import MAX_DEPTH, Reach, reach, resolve_roots

PROBLEM = OpenApiResponse(description="problem+json with a stable `code`")
COMMON = [
    OpenApiParameter("depth", int, description=f"1..{MAX_DEPTH}; unbounded if absent"),
    OpenApiParameter("as_of", str, description="only edges recorded by this RFC 3339 time"),
    OpenApiParameter("kind", str, description="only nodes of this kind (repeatable)"),
    OpenApiParameter("page", int),
    OpenApiParameter("page_size", int),
]
PROV_NODE_LIMIT = 5000
HIGHEST_VERSION = 2**62


# Guarded as the host says (`LINEAGE_API_PERMISSION_CLASSES`), read per request. No docstring:
# the schema would take it for the description of every view below that has none.
class LineageAPIView(APIView):
    def get_permissions(self) -> list[BasePermission]:
        return [permission() for permission in api_permission_classes()]


def reach_body(result: Reach, options: dict[str, Any]) -> dict[str, Any]:
    page, size = options["page"], options["page_size"]
    return {
        "root": result.roots[0] if len(result.roots) == 1 else result.roots,
        "roots": result.roots,
        "counts": result.counts,
        "total": result.total,
        "page": page,
        "page_size": size,
        "has_next": page * size < result.total,
        "nodes": [
            {
                "node": node["node"],
                "kind": node["kind"],
                "ref": node["ref"],
                "label": node["label"],
                "recorded_at": rfc3339(node["recorded_at"]),
            }
            for node in result.nodes
        ],
    }


def _one_root(node: str) -> tuple[list[int], list[str]]:
    root_ids, roots = resolve_roots([node]) if ":" in node else ([], [])
    if not root_ids:
        raise NodeNotFound(f"no lineage node {node}")
    return root_ids, roots


class ReachView(LineageAPIView):
    direction = "descendants"

    @extend_schema(parameters=COMMON, responses={200: None, 400: PROBLEM, 404: PROBLEM})
    def get(self, request: Request, node: str) -> Response:
        options = walk_options(request)
        root_ids, roots = _one_root(node)
        result = reach(
            root_ids,
            roots,
            direction=self.direction,
            depth=options["depth"],
            as_of=options["as_of"],
            kinds=options["kinds"],
            limit=options["limit"],
            offset=options["offset"],
        )
        return Response(reach_body(result, options))


class EntryPointSchema(AutoSchema):
    """The blast radius's host-registered entry points, documented as they are registered
    (the schema is generated after every app is ready)."""

    # drf-spectacular's signature; the DRF stubs declare the older schema inspector's.
    def get_description(self) -> str:  # type: ignore[override]
        phrases = ["a source version range"] + [
            entry.phrase for entry in registry.entry_points.values() if entry.phrase
        ]
        return f"Everything downstream of {' or '.join(phrases)}."

    def get_override_parameters(self) -> list[Any]:
        return [
            *super().get_override_parameters(),
            *(OpenApiParameter(name, str) for name in registry.entry_points),
        ]


class BlastRadiusView(LineageAPIView):
    """Everything downstream of a source version range, a node, or a host's entry point."""

    schema = EntryPointSchema()

    @extend_schema(
        parameters=[
            OpenApiParameter("source", str),
            OpenApiParameter("from_version", int),
            OpenApiParameter("to_version", int),
            OpenApiParameter("node", str, description="any kind:ref (repeatable)"),
            *COMMON,
        ],
        responses={200: None, 400: PROBLEM},
    )
    def get(self, request: Request) -> Response:
        options = walk_options(request)
        params = request.query_params
        roots: list[tuple[int, str]] = []
        named = False
        if params.get("source"):
            low = int_param(request, "from_version", 0, 0, HIGHEST_VERSION) or 0
            high = (
                int_param(request, "to_version", HIGHEST_VERSION, 0, HIGHEST_VERSION)
                or HIGHEST_VERSION
            )
            roots += roots_for_source_versions(params["source"], low, high)
            named = True
        for name, entry in registry.entry_points.items():
            if params.get(name):
                roots += entry.roots(params[name])
                named = True
        if params.getlist("node"):
            ids, names = resolve_roots(params.getlist("node"))
            roots += list(zip(ids, names, strict=True))
            named = True
        if not named:
            choices = ["source (+ from_version/to_version)", *registry.entry_points]
            raise InvalidParameter(
                f"name an entry point: {', '.join(choices)} or node", code="entry_point_missing"
            )
        result = blast_radius(
            roots,
            as_of=options["as_of"],
            kinds=options["kinds"],
            limit=options["limit"],
            offset=options["offset"],
        )
        return Response(reach_body(result, options))


class ProvView(LineageAPIView):
    @extend_schema(
        parameters=[OpenApiParameter("format", str, enum=["json", "provn"])],
        responses={200: None, 400: PROBLEM, 404: PROBLEM},
    )
    def get(self, request: Request, node: str) -> HttpResponse:
        fmt = request.query_params.get("format", "json")
        if fmt not in ("json", "provn"):
            raise InvalidParameter("format must be json or provn", code="invalid_format")
        root_ids, roots = _one_root(node)
        wanted = set(root_ids)
        for direction in ("ancestors", "descendants"):
            result = reach(root_ids, roots, direction=direction, limit=PROV_NODE_LIMIT)
            wanted |= {item["pk"] for item in result.nodes}
        document = prov_document(*subgraph(wanted))
        if fmt == "provn":
            return HttpResponse(document.get_provn(), content_type="text/provenance-notation")
        return HttpResponse(document.serialize(format="json"), content_type="application/json")
