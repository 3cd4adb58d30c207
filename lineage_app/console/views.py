"""The lineage explorer page. Thin: selectors read, the chart draws, the template shows."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.mixins import LoginRequiredMixin, UserPassesTestMixin
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.utils.cache import patch_vary_headers
from django.views import View

from lineage_app.charts import figure_json, lineage_graph_figure
from lineage_app.conf import console_access
from lineage_app.console.forms import ExplorerForm
from lineage_app.console.links import explorer_url, node_targets
from lineage_app.registry import kind_colour, registry
from lineage_app.selectors.graph import MAX_GRAPH_DEPTH, node_candidates, subgraph

EXPLORER_TEMPLATE = "lineage_app/explorer.html"
GRAPH_TEMPLATE = "lineage_app/partials/graph_region.html"


class LineageAccessMixin(LoginRequiredMixin, UserPassesTestMixin):
    """Signed in (else to the sign-in page), and let in by the host's check,
    `LINEAGE_CONSOLE_ACCESS` (else 403)."""

    def test_func(self) -> bool:
        return console_access()(self.request.user)  # type: ignore[attr-defined]


def wants_partial(request: HttpRequest) -> bool:
    """htmx asks for the graph region only; a history restore wants the whole page back."""
    return (
        request.headers.get("HX-Request") == "true"
        and request.headers.get("HX-History-Restore-Request") != "true"
    )


class LineageExplorerView(LineageAccessMixin, View):
    """Search a node; see its upstream and downstream as a layered graph.

    `?node=` takes `kind:ref` or a bare id. A bare id that names one node is redirected to
    its `kind:ref`, so the URL says exactly what is drawn; one that names several draws the
    likeliest and offers the others. htmx (the depth control) gets the graph region only.
    """

    def get(self, request: HttpRequest) -> HttpResponse:
        page = registry.explorer
        form = ExplorerForm(request.GET or None)
        depth = form.depth_value()
        text = (request.GET.get("node") or "").strip()
        context: dict[str, Any] = {
            "form": form,
            "query": text,
            "depth": depth,
            "depths": range(1, MAX_GRAPH_DEPTH + 1),
            "lede": page.lede,
            "search_example": page.search_example,
        }
        if not text:
            context["start_template"] = page.start_template
            if page.start_context is not None:
                context.update(page.start_context(request))
            return TemplateResponse(request, EXPLORER_TEMPLATE, context)
        candidates = node_candidates(text)
        if not candidates:
            context["not_found"] = text
            return TemplateResponse(request, EXPLORER_TEMPLATE, context, status=404)
        root = candidates[0]
        if root.node_id != text and len(candidates) == 1 and not wants_partial(request):
            return redirect(explorer_url(root.node_id, depth))
        graph = subgraph(root=root, depth=depth)
        targets = node_targets((node.kind, node.ref) for node in graph.nodes)
        context.update(
            {
                "root": root,
                "alternatives": candidates[1:],
                "graph": graph,
                "figure": figure_json(lineage_graph_figure(graph, targets)),
                "root_url": targets.get(root.node_id, ""),
                "blast_radius_url": (
                    page.blast_radius_url(root.node_id) if page.blast_radius_url else ""
                ),
                "counts": [
                    {"kind": kind, "up": up, "down": down, "colour": kind_colour(kind)}
                    for kind, up, down in graph.count_rows()
                ],
                "drawn": [
                    {
                        "node": node,
                        "url": targets.get(node.node_id, ""),
                        "colour": kind_colour(node.kind),
                    }
                    for node in graph.nodes
                ],
            }
        )
        template = GRAPH_TEMPLATE if wants_partial(request) else EXPLORER_TEMPLATE
        response = TemplateResponse(request, template, context)
        patch_vary_headers(response, ("HX-Request",))
        return response
