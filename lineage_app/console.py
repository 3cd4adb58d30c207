"""Console pages for lineage: the explorer, blast-radius reports, corrections, evidence, replay.

Thin, like the rest of the console: selectors read (`lineage_app.selectors`), services write
(`correction_create`, `snapshot_replay`), charts draw (`lineage_app.charts`), templates show.
"""

from __future__ import annotations

import uuid
from typing import Any

import plotly.graph_objects as go
from django.contrib import messages
from django.core.paginator import EmptyPage, Paginator
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.safestring import SafeString, mark_safe
from django.views import View

from lineage_app.charts import KIND_STYLES, kind_colour, lineage_graph_figure
from lineage_app.console_forms import CorrectionForm, ExplorerForm, ReplayForm
from lineage_app.console_tables import REVIEW_TABLES
from lineage_app.selectors.blast import roots_for_memory_class, roots_for_source_versions
from lineage_app.selectors.console_evidence import console_evidence_detail
from lineage_app.selectors.graph import MAX_GRAPH_DEPTH, kind_order, node_candidates, subgraph
from lineage_app.selectors.reach import resolve_roots
from lineage_app.selectors.review import (
    explorer_url,
    node_targets,
    review_page,
    snapshot_taints,
)
from reconcile_app.choices import Role
from reconcile_app.console.views import PER_PAGE, OperatorRequiredMixin, StaffRequiredMixin
from reconcile_app.errors import DomainError, NotFound
from reconcile_app.models import Correction, DecisionSnapshot
from reconcile_app.request_id import request_id_of
from reconcile_app.roles import has_role
from reconcile_app.services.corrections import correction_create
from reconcile_app.services.replay import snapshot_replay

EXPLORER_TEMPLATE = "lineage_app/explorer.html"
GRAPH_TEMPLATE = "lineage_app/partials/graph_region.html"
BLAST_TEMPLATE = "lineage_app/blast_radius.html"
CORRECTION_TEMPLATE = "lineage_app/correction_detail.html"
BLAST_REGION_TEMPLATE = "lineage_app/partials/blast_region.html"
EVIDENCE_TEMPLATE = "lineage_app/evidence_detail.html"
REPLAY_TEMPLATE = "lineage_app/partials/replay_result.html"
RECENT_CORRECTIONS = 8
# What `json_script` escapes: the figure sits in a <script type="application/json"> block.
_JSON_ESCAPES = {ord(">"): "\\u003E", ord("<"): "\\u003C", ord("&"): "\\u0026"}


def _wants_partial(request: HttpRequest) -> bool:
    htmx = getattr(request, "htmx", None)
    return bool(htmx) and not htmx.history_restore_request  # type: ignore[union-attr]


def _request_id(request: HttpRequest) -> str:
    # Same id as the access log and the X-Request-ID response header.
    return request_id_of(request) or uuid.uuid4().hex


def figure_json(figure: go.Figure) -> SafeString:
    """The figure as JSON for lineage.js to draw.

    Not `fig.to_html()`: its inline <script> would need the page's CSP nonce, and an htmx
    swap brings a response with a different one. Data in a JSON block is never executed, so
    the only script is static/reconcile/lineage.js (same origin).
    """
    return mark_safe(figure.to_json().translate(_JSON_ESCAPES))  # noqa: S308  # nosec B308 B703 - escaped JSON


# --- Explorer -------------------------------------------------------------------------------


class LineageExplorerView(StaffRequiredMixin, View):
    """Search a node; see its upstream and downstream as a layered graph.

    `?node=` takes `kind:ref` or a bare id. A bare id that names one node is redirected to
    its `kind:ref`, so the URL says exactly what is drawn; one that names several draws the
    likeliest and offers the others. htmx (the depth control) gets the graph region only.
    """

    def get(self, request: HttpRequest) -> HttpResponse:
        form = ExplorerForm(request.GET or None)
        depth = form.depth_value()
        text = (request.GET.get("node") or "").strip()
        context: dict[str, Any] = {
            "form": form,
            "query": text,
            "depth": depth,
            "depths": range(1, MAX_GRAPH_DEPTH + 1),
            "kind_styles": KIND_STYLES,
        }
        if not text:
            context["recent_corrections"] = Correction.objects.select_related("corrected")[
                :RECENT_CORRECTIONS
            ]
            return TemplateResponse(request, EXPLORER_TEMPLATE, context)
        candidates = node_candidates(text)
        if not candidates:
            context["not_found"] = text
            return TemplateResponse(request, EXPLORER_TEMPLATE, context, status=404)
        root = candidates[0]
        if root.node_id != text and len(candidates) == 1 and not _wants_partial(request):
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
        template = GRAPH_TEMPLATE if _wants_partial(request) else EXPLORER_TEMPLATE
        response = TemplateResponse(request, template, context)
        patch_vary_headers(response, ("HX-Request",))
        return response


# --- Blast radius ---------------------------------------------------------------------------


def blast_context(
    request: HttpRequest, roots: list[tuple[int, str]], correction: Correction | None = None
) -> dict[str, Any]:
    """Counts by kind and one page of one review kind, as a tabbed, paginated table."""
    try:
        page = max(1, int(request.GET.get("page", "1")))
    except ValueError:
        page = 1
    found = review_page(
        roots=roots,
        kind=request.GET.get("kind"),
        page=page,
        per_page=PER_PAGE,
        correction=correction,
    )
    # django-tables2 would copy its data into a list (the whole blast radius); the console's
    # table template pages through `table.page`, so hand it a Django page over the lazy rows.
    paginator = Paginator(found.rows, PER_PAGE, allow_empty_first_page=True)
    try:
        current = paginator.page(page)
    except EmptyPage:
        current = paginator.page(paginator.num_pages)
    table = REVIEW_TABLES[found.kind](list(current.object_list))
    current.object_list = table.rows  # the template iterates bound rows
    table.paginator, table.page = paginator, current
    others = request.GET.copy()
    for name in ("kind", "page"):
        others.pop(name, None)
    return {
        "review": found,
        "table": table,
        "tab": found.kind,
        "tab_items": [
            {
                "value": kind,
                "label": f"{kind.capitalize()}s" if kind != "memory" else "Memories",
                "count": count,
            }
            for kind, count in found.review_counts()
        ],
        "tab_query": others.urlencode(),
        "count_items": [
            {"kind": kind, "count": count, "colour": kind_colour(kind)}
            for kind, count in sorted(found.counts.items(), key=lambda item: kind_order(item[0]))
        ],
    }


def _blast_roots(params: QueryDict) -> tuple[list[tuple[int, str]], str, bool]:
    """Roots for the entry points named in the query, a title, and whether any was named."""
    roots: list[tuple[int, str]] = []
    titles: list[str] = []
    reducer, source = params.get("reducer", ""), params.get("source", "")
    memory_class = params.get("memory_class", "")
    if reducer:
        ids, names = resolve_roots([f"reducer:{reducer}"])
        roots += list(zip(ids, names, strict=True))
        titles.append(f"reducer {reducer}")
    if source:
        low = _version(params.get("from_version"), 0)
        high = _version(params.get("to_version"), 2**62)
        roots += roots_for_source_versions(source, low, high)
        upper = str(high) if high < 2**62 else "latest"
        span = f"@{low}" if low == high else f" versions {low} to {upper}"
        titles.append(f"{source}{span}")
    if memory_class:
        roots += roots_for_memory_class(memory_class)
        titles.append(f"memory class {memory_class}")
    nodes = [node for node in params.getlist("node") if node]
    if nodes:
        ids, names = resolve_roots([node for node in nodes if ":" in node])
        roots += list(zip(ids, names, strict=True))
        titles.append(", ".join(nodes))
    return roots, " + ".join(titles), bool(titles)


def _version(raw: str | None, default: int) -> int:
    try:
        return max(0, int(raw)) if raw not in (None, "") else default
    except ValueError:
        return default


class BlastRadiusView(StaffRequiredMixin, View):
    """Everything downstream of a reducer version, a source version range, a memory class or
    any node: counts by kind and the snapshots, decisions, effects and memories to review."""

    def get(self, request: HttpRequest) -> HttpResponse:
        roots, title, named = _blast_roots(request.GET)
        context: dict[str, Any] = {
            "title": title,
            "named": named,
            "roots": roots,
            "nodes": [node for node in request.GET.getlist("node") if node],
        }
        if named:
            context.update(blast_context(request, roots))
        template = BLAST_REGION_TEMPLATE if named and _wants_partial(request) else BLAST_TEMPLATE
        response = TemplateResponse(request, template, context)
        patch_vary_headers(response, ("HX-Request",))
        return response


class CorrectionDetailView(StaffRequiredMixin, View):
    def get(self, request: HttpRequest, correction_id: str) -> HttpResponse:
        correction = (
            Correction.objects.select_related("corrected", "entry", "actor")
            .filter(correction_id=correction_id)
            .first()
        )
        if correction is None:
            raise Http404(f"no correction {correction_id}")
        ids, names = resolve_roots([f"evidence:{correction.corrected.evidence_id}"])
        context = {
            "correction": correction,
            **blast_context(request, list(zip(ids, names, strict=True)), correction),
        }
        template = BLAST_REGION_TEMPLATE if _wants_partial(request) else CORRECTION_TEMPLATE
        response = TemplateResponse(request, template, context)
        patch_vary_headers(response, ("HX-Request",))
        return response


# --- Evidence and corrections ---------------------------------------------------------------


def evidence_page(
    request: HttpRequest,
    evidence_id: str,
    *,
    status: int = 200,
    form: CorrectionForm | None = None,
    error: DomainError | None = None,
) -> HttpResponse:
    try:
        detail = console_evidence_detail(evidence_id=evidence_id)
    except NotFound as exc:
        raise Http404(exc.detail) from exc
    context = {
        "detail": detail,
        "entry": detail.entry,
        "can_correct": has_role(request.user, Role.OPERATOR) and detail.correction is None,
        "form": form or CorrectionForm(),
        "form_error": error,
    }
    return TemplateResponse(request, EVIDENCE_TEMPLATE, context, status=status)


class EvidenceDetailView(StaffRequiredMixin, View):
    def get(self, request: HttpRequest, evidence_id: str) -> HttpResponse:
        return evidence_page(request, evidence_id)


class EvidenceCorrectView(OperatorRequiredMixin, View):
    """An operator corrects an entry: the service appends the correction, taints what is
    downstream and audits it; the page that lists what to review opens next."""

    def post(self, request: HttpRequest, evidence_id: str) -> HttpResponse:
        form = CorrectionForm(request.POST)
        if not form.is_valid():
            text = " ".join(str(message) for errors in form.errors.values() for message in errors)
            error = DomainError(text, code="invalid_request")
            return evidence_page(request, evidence_id, status=400, form=form, error=error)
        try:
            correction = correction_create(
                evidence_id=evidence_id,
                reason=form.cleaned_data["reason"],
                actor=request.user,
                replacement=form.cleaned_data["replacement"],
                request_id=_request_id(request),
            )
        except NotFound as exc:
            raise Http404(exc.detail) from exc
        except DomainError as exc:
            return evidence_page(request, evidence_id, status=exc.status, form=form, error=exc)
        verb = "superseded" if form.cleaned_data["replacement"] else "revoked"
        messages.success(request, f"{evidence_id} {verb} by {correction.correction_id}.")
        return redirect("console-correction", correction_id=correction.correction_id)


# --- Replay ---------------------------------------------------------------------------------


class SnapshotReplayView(StaffRequiredMixin, View):
    """Replay a snapshot as recorded or under today's corrections. Read-only, so any role."""

    def post(self, request: HttpRequest, snapshot_id: str) -> HttpResponse:
        snapshot = (
            DecisionSnapshot.objects.select_related("contract")
            .filter(snapshot_id=snapshot_id)
            .first()
        )
        if snapshot is None:
            raise Http404(f"no snapshot {snapshot_id}")
        form = ReplayForm(request.POST)
        context: dict[str, Any] = {"snapshot_id": snapshot_id}
        if not form.is_valid():
            context["error"] = DomainError("Choose how to replay.", code="invalid_mode")
        else:
            mode = form.cleaned_data["mode"]
            try:
                context["result"] = snapshot_replay(snapshot=snapshot, mode=mode)
            except DomainError as exc:
                context["error"] = exc
            if mode == "corrected":
                context["taints"] = snapshot_taints(snapshot_id=snapshot_id)
        if not request.htmx:  # type: ignore[attr-defined]
            result = context.get("result")
            if result is None:
                messages.error(request, context["error"].detail)
            elif result.exact:
                messages.success(
                    request, f"Replay {result.mode.replace('_', ' ')}: exact — hash matches."
                )
            else:
                changed = ", ".join(item["path"] for item in result.differences) or "the hash"
                messages.warning(
                    request, f"Replay {result.mode.replace('_', ' ')} differs: {changed}."
                )
            return redirect(f"{reverse('console-snapshot', args=[snapshot_id])}#replay")
        # htmx swaps only 2xx answers: a refusal is shown in the panel, with a 200.
        return TemplateResponse(request, REPLAY_TEMPLATE, context)
