"""Lineage API: descendants, ancestors, blast radius, PROV export."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lineage_app.models import Edge, Node
from lineage_app.prov_export import prov_document
from lineage_app.selectors.blast import (
    blast_radius,
    roots_for_memory_class,
    roots_for_source_versions,
)
from lineage_app.selectors.reach import MAX_DEPTH, Reach, reach, resolve_roots
from reconcile_app.api.permissions import PeopleOnly
from reconcile_app.canonical import rfc3339
from reconcile_app.errors import NotFound, ValidationFailed
from reconcile_app.instants import instant_from_text

PROBLEM = OpenApiResponse(description="problem+json with a stable `code`")
PAGE_SIZE, MAX_PAGE_SIZE = 100, 1000
COMMON = [
    OpenApiParameter("depth", int, description=f"1..{MAX_DEPTH}; unbounded if absent"),
    OpenApiParameter("as_of", str, description="only edges recorded by this RFC 3339 time"),
    OpenApiParameter("kind", str, description="only nodes of this kind (repeatable)"),
    OpenApiParameter("page", int),
    OpenApiParameter("page_size", int),
]


def _int(request: Request, name: str, default: int | None, low: int, high: int) -> int | None:
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise ValidationFailed(f"{name} must be an integer", code="invalid_parameter") from exc
    if not low <= value <= high:
        raise ValidationFailed(f"{name} must be between {low} and {high}", code="invalid_parameter")
    return value


def _options(request: Request) -> dict[str, Any]:
    as_of = instant_from_text(request.query_params.get("as_of"), "as_of")
    page = _int(request, "page", 1, 1, 10**6) or 1
    page_size = _int(request, "page_size", PAGE_SIZE, 1, MAX_PAGE_SIZE) or PAGE_SIZE
    return {
        "depth": _int(request, "depth", None, 1, MAX_DEPTH),
        "as_of": as_of,
        "kinds": request.query_params.getlist("kind") or None,
        "limit": page_size,
        "offset": (page - 1) * page_size,
        "page": page,
        "page_size": page_size,
    }


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


class ReachView(APIView):
    permission_classes = [PeopleOnly]
    direction = "descendants"

    @extend_schema(parameters=COMMON, responses={200: None, 400: PROBLEM, 404: PROBLEM})
    def get(self, request: Request, node: str) -> Response:
        options = _options(request)
        root_ids, roots = resolve_roots([node]) if ":" in node else ([], [])
        if not root_ids:
            raise NotFound(f"no lineage node {node}", code="node_not_found")
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


class BlastRadiusView(APIView):
    """Everything downstream of a source version range or a memory class."""

    permission_classes = [PeopleOnly]

    @extend_schema(
        parameters=[
            OpenApiParameter("source", str),
            OpenApiParameter("from_version", int),
            OpenApiParameter("to_version", int),
            OpenApiParameter("memory_class", str),
            OpenApiParameter("node", str, description="any kind:ref (repeatable)"),
            *COMMON,
        ],
        responses={200: None, 400: PROBLEM},
    )
    def get(self, request: Request) -> Response:
        options = _options(request)
        params = request.query_params
        roots: list[tuple[int, str]] = []
        if params.get("source"):
            low = _int(request, "from_version", 0, 0, 2**62) or 0
            high = _int(request, "to_version", 2**62, 0, 2**62) or 2**62
            roots += roots_for_source_versions(params["source"], low, high)
        if params.get("memory_class"):
            roots += roots_for_memory_class(params["memory_class"])
        if params.getlist("node"):
            ids, names = resolve_roots(params.getlist("node"))
            roots += list(zip(ids, names, strict=True))
        if not (params.get("source") or params.get("memory_class") or params.getlist("node")):
            raise ValidationFailed(
                "name an entry point: source (+ from_version/to_version), memory_class or node",
                code="entry_point_missing",
            )
        result = blast_radius(
            roots,
            as_of=options["as_of"],
            kinds=options["kinds"],
            limit=options["limit"],
            offset=options["offset"],
        )
        return Response(reach_body(result, options))


PROV_NODE_LIMIT = 5000


class ProvView(APIView):
    permission_classes = [PeopleOnly]

    @extend_schema(
        parameters=[OpenApiParameter("format", str, enum=["json", "provn"])],
        responses={200: None, 400: PROBLEM, 404: PROBLEM},
    )
    def get(self, request: Request, node: str) -> HttpResponse:
        fmt = request.query_params.get("format", "json")
        if fmt not in ("json", "provn"):
            raise ValidationFailed("format must be json or provn", code="invalid_format")
        root_ids, roots = resolve_roots([node]) if ":" in node else ([], [])
        if not root_ids:
            raise NotFound(f"no lineage node {node}", code="node_not_found")
        wanted = set(root_ids)
        for direction in ("ancestors", "descendants"):
            result = reach(root_ids, roots, direction=direction, limit=PROV_NODE_LIMIT)
            wanted |= {item["pk"] for item in result.nodes}
        nodes = list(Node.objects.filter(pk__in=wanted))
        edges = list(Edge.objects.filter(src_id__in=wanted, dst_id__in=wanted))
        document = prov_document(nodes, edges)
        if fmt == "provn":
            return HttpResponse(document.get_provn(), content_type="text/provenance-notation")
        return HttpResponse(document.serialize(format="json"), content_type="application/json")
