"""Lineage API: descendants, ancestors, blast radius, PROV export."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.permissions import BasePermission
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from lineage_app.api.exceptions import InvalidParameter, NodeNotFound
from lineage_app.api.params import MAX_PAGE_SIZE, int_param, rfc3339, walk_options
from lineage_app.api.serializers import LineageReachSerializer
from lineage_app.conf import api_permission_classes
from lineage_app.prov_export import prov_document
from lineage_app.registry import registry
from lineage_app.selectors.blast import blast_radius, source_version_nodes
from lineage_app.selectors.nodes import invalidation_partners, subgraph
from lineage_app.selectors.reach import MAX_DEPTH, Reach, reach, resolve_roots

TAG = "lineage"
# The schema's problem codes per status (the host's schema turns them into problem+json
# responses; lineage_app raises DRF exceptions with these codes, lineage_app.api.exceptions).
PROBLEM_CODES = "x-problem-codes"
DEPTH = OpenApiParameter(
    "depth",
    {"type": "integer", "minimum": 1, "maximum": MAX_DEPTH},
    description=f"1..{MAX_DEPTH}; unbounded if absent",
)
COMMON = [
    DEPTH,
    OpenApiParameter(
        "as_of", OpenApiTypes.DATETIME, description="only edges recorded by this RFC 3339 time"
    ),
    OpenApiParameter(
        "kind",
        {"type": "array", "items": {"type": "string"}},
        explode=True,
        description="only nodes of this kind (repeatable)",
    ),
    OpenApiParameter("page", {"type": "integer", "minimum": 1, "maximum": 10**6}),
    OpenApiParameter("page_size", {"type": "integer", "minimum": 1, "maximum": MAX_PAGE_SIZE}),
]
WALK_PROBLEMS = {"400": ["invalid_parameter"], "404": ["node_not_found", "not_found"]}
PROV_NODE_LIMIT = 5000
HIGHEST_VERSION = 2**62


# Guarded as the host says (`LINEAGE_API_PERMISSION_CLASSES`), read per request. No docstring:
# the schema would take it for the description of every view below that has none.
class LineageAPIView(APIView):
    def get_permissions(self) -> list[BasePermission]:
        return [permission() for permission in api_permission_classes()]


def reach_body(result: Reach, options: dict[str, Any]) -> dict[str, Any]:
    page, size = options["page"], options["page_size"]
    if page > 1 and not result.nodes:
        # As every list of the API answers a page past the end (docs/api.md): an empty 200
        # reads as "nothing more downstream" to a client that skipped ahead.
        raise NotFound(f"page {page} is past the end ({result.total} nodes)", code="not_found")
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


class DescendantsView(ReachView):
    direction = "descendants"

    @extend_schema(
        operation_id="lineage_descendants",
        summary="Everything downstream of a node",
        description="What was derived from the node (`kind:ref`), by kind, a page at a time.",
        tags=[TAG],
        parameters=COMMON,
        responses={200: LineageReachSerializer},
        extensions={PROBLEM_CODES: WALK_PROBLEMS},
    )
    def get(self, request: Request, node: str) -> Response:
        return super().get(request, node)


class AncestorsView(ReachView):
    direction = "ancestors"

    @extend_schema(
        operation_id="lineage_ancestors",
        summary="Everything upstream of a node",
        description="What the node (`kind:ref`) was derived from, by kind, a page at a time.",
        tags=[TAG],
        parameters=COMMON,
        responses={200: LineageReachSerializer},
        extensions={PROBLEM_CODES: WALK_PROBLEMS},
    )
    def get(self, request: Request, node: str) -> Response:
        return super().get(request, node)


# The host's schema class (names, problem responses), whatever it is: lineage_app does not
# know the host, only DRF's settings.
class EntryPointSchema(api_settings.DEFAULT_SCHEMA_CLASS):  # type: ignore[name-defined,misc]
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
        operation_id="lineage_blast_radius",
        summary="Everything downstream of a source version range, nodes or an entry point",
        tags=[TAG],
        parameters=[
            OpenApiParameter("source", str, description="a source name"),
            OpenApiParameter(
                "from_version",
                {"type": "integer", "minimum": 0, "maximum": HIGHEST_VERSION},
                description="with source: the first version (default 0)",
            ),
            OpenApiParameter(
                "to_version",
                {"type": "integer", "minimum": 0, "maximum": HIGHEST_VERSION},
                description="with source: the last version (default: the newest)",
            ),
            OpenApiParameter(
                "node",
                {"type": "array", "items": {"type": "string"}},
                explode=True,
                description="any kind:ref (repeatable)",
            ),
            *COMMON,
        ],
        responses={200: LineageReachSerializer},
        extensions={
            PROBLEM_CODES: {
                "400": ["invalid_parameter", "entry_point_missing"],
                "404": ["node_not_found", "not_found"],
            }
        },
    )
    def get(self, request: Request) -> Response:
        options = walk_options(request)
        params = request.query_params
        roots: list[tuple[int, str]] = []
        named = False
        missing: list[str] = []
        if params.get("source"):
            low = int_param(request, "from_version", 0, 0, HIGHEST_VERSION) or 0
            # 0 is a version like any other here, not "not given".
            asked_high = int_param(request, "to_version", None, 0, HIGHEST_VERSION)
            high = HIGHEST_VERSION if asked_high is None else asked_high
            if low > high:
                raise InvalidParameter(
                    f"from_version ({low}) is above to_version ({high})",
                    code="invalid_parameter",
                )
            versions = source_version_nodes(params["source"])
            if not versions:
                missing.append(f"source {params['source']}")
            roots += [(pk, node) for pk, node, version in versions if low <= version <= high]
            named = True
        for name, entry in registry.entry_points.items():
            if params.get(name):
                found = entry.roots(params[name])
                if not found and entry.known is not None and not entry.known(params[name]):
                    missing.append(f"{name} {params[name]}")
                roots += found
                named = True
        if params.getlist("node"):
            wanted = params.getlist("node")
            ids, names = resolve_roots(wanted)
            missing += [node for node in wanted if node not in names]
            roots += list(zip(ids, names, strict=True))
            named = True
        if missing:
            # An empty answer would read as "nothing downstream" for a name that was mistyped.
            raise NodeNotFound(f"nothing in the lineage is named {'; '.join(missing)}")
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


PROV_N = "text/provenance-notation"


class ProvNotationRenderer(BaseRenderer):
    """Lets `Accept: text/provenance-notation` through content negotiation: the view writes
    PROV-N itself, so only a problem (a dict) is ever rendered here, and stays JSON."""

    media_type = PROV_N
    format = "provn"

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        return JSONRenderer().render(data, accepted_media_type, renderer_context)


class ProvView(LineageAPIView):
    renderer_classes = [JSONRenderer, ProvNotationRenderer]

    @extend_schema(
        operation_id="lineage_prov",
        summary="Export a node's lineage as W3C PROV",
        description="The node's ancestors and descendants as a PROV document: PROV-JSON "
        "(`format=json`) or PROV-N (`format=provn`). Without `format`, PROV-N when `Accept` "
        "asks for `text/provenance-notation` rather than JSON, else PROV-JSON. A document "
        f"holds at most {PROV_NODE_LIMIT:,} nodes each way: a lineage reaching more is 400 "
        "`export_too_large` (narrow it with `depth`, or page through `ancestors` and "
        "`descendants`), never a document missing part of it.",
        tags=[TAG],
        parameters=[OpenApiParameter("format", str, enum=["json", "provn"]), DEPTH],
        responses={
            (200, "application/json"): OpenApiTypes.OBJECT,
            (200, PROV_N): OpenApiTypes.STR,
        },
        extensions={
            PROBLEM_CODES: {
                "400": ["invalid_format", "invalid_parameter", "export_too_large"],
                "404": ["node_not_found"],
            }
        },
    )
    def get(self, request: Request, node: str) -> HttpResponse:
        # Without `format`, the Accept header chooses (PROV-JSON unless PROV-N is preferred).
        asked = "provn" if request.accepted_media_type == PROV_N else "json"
        fmt = request.query_params.get("format", asked)
        if fmt not in ("json", "provn"):
            raise InvalidParameter("format must be json or provn", code="invalid_format")
        depth = int_param(request, "depth", None, 1, MAX_DEPTH)
        root_ids, roots = _one_root(node)
        wanted = set(root_ids)
        for direction in ("ancestors", "descendants"):
            result = reach(
                root_ids,
                roots,
                direction=direction,
                depth=depth,
                limit=PROV_NODE_LIMIT,
            )
            if result.total > len(result.nodes):
                # A page of a walk is ordered by kind: cut, it would drop whole kinds (every
                # snapshot, say) from a document an auditor reads as the whole lineage.
                raise InvalidParameter(
                    f"{node} has {result.total:,} {direction}, more than the "
                    f"{PROV_NODE_LIMIT:,} one PROV document holds each way; narrow it with "
                    f"depth=, or page through /api/v1/lineage/{node}/{direction}",
                    code="export_too_large",
                )
            wanted |= {item["pk"] for item in result.nodes}
        # The walks follow derivation, as descendants and ancestors do; the entries that
        # invalidated a node reached (or that it invalidated) join it, so the document says
        # what replaced what, but nothing built on a replacement is walked into it.
        wanted |= invalidation_partners(wanted)
        document = prov_document(*subgraph(wanted))
        if fmt == "provn":
            return HttpResponse(document.get_provn(), content_type=PROV_N)
        return HttpResponse(document.serialize(format="json"), content_type="application/json")
