"""Blast-radius reports: what to review downstream of a reducer version, a source version
range, a memory class, an evidence entry or any lineage node, as tabs by kind over paginated tables.

The walk is lineage_app's (`blast_radius`); which kinds a person reviews and the rows they
name are reconcile's (`reconcile_app.selectors.blast_radius`).
"""

from __future__ import annotations

from typing import Any

from django.core.paginator import EmptyPage, Paginator
from django.http import HttpRequest, HttpResponse, QueryDict
from django.template.response import TemplateResponse
from django.utils.cache import patch_vary_headers
from django.views import View

from lineage_app.registry import kind_colour, kind_order
from lineage_app.selectors.blast import roots_for_source_versions
from lineage_app.selectors.reach import resolve_roots
from reconcile_app.console.mixins import PER_PAGE, HtmxPartialMixin, StaffRequiredMixin
from reconcile_app.console.tables.blast_radius import REVIEW_TABLES
from reconcile_app.models import Correction
from reconcile_app.selectors.blast_radius import review_page
from reconcile_app.selectors.lineage import REVIEW_PLURALS, memory_class_roots

BLAST_TEMPLATE = "reconcile_app/blast_radius.html"


BLAST_REGION_TEMPLATE = "reconcile_app/partials/blast_region.html"


HIGHEST_VERSION = 2**62
# The highest page number taken from the URL (as the lineage API's `page`): the page becomes
# an SQL OFFSET, and one past a 64-bit integer was a server error, not the last page.
MAX_PAGE = 10**6


def blast_context(
    request: HttpRequest, roots: list[tuple[int, str]], correction: Correction | None = None
) -> dict[str, Any]:
    """Counts by kind and one page of one review kind, as a tabbed, paginated table."""
    try:
        page = min(max(1, int(request.GET.get("page", "1"))), MAX_PAGE)
    except ValueError:
        page = 1
    found = review_page(
        roots=roots,
        kind=request.GET.get("kind"),
        page=page,
        per_page=PER_PAGE,
        correction=correction,
        # A correction's report is what it reached when it was made (what it counted and
        # tainted), not what has come downstream of the entry since.
        as_of=correction.completed_at if correction is not None else None,
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
                "label": REVIEW_PLURALS[kind].capitalize(),
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
    evidence = params.get("evidence", "").strip()
    if reducer:
        ids, names = resolve_roots([f"reducer:{reducer}"])
        roots += list(zip(ids, names, strict=True))
        titles.append(f"reducer {reducer}")
    if source:
        low = _version(params.get("from_version"), 0)
        high = _version(params.get("to_version"), HIGHEST_VERSION)
        roots += roots_for_source_versions(source, low, high)
        upper = str(high) if high < HIGHEST_VERSION else "latest"
        span = f"@{low}" if low == high else f" versions {low} to {upper}"
        titles.append(f"{source}{span}")
    if memory_class:
        roots += memory_class_roots(memory_class)
        titles.append(f"memory class {memory_class}")
    if evidence:
        # An auditor starts from the entry they are reading: everything that relied on it.
        ids, names = resolve_roots([f"evidence:{evidence}"])
        roots += list(zip(ids, names, strict=True))
        titles.append(f"evidence {evidence}")
    nodes = [node for node in params.getlist("node") if node]
    if nodes:
        ids, names = resolve_roots([node for node in nodes if ":" in node])
        roots += list(zip(ids, names, strict=True))
        titles.append(", ".join(nodes))
    return roots, " + ".join(titles), bool(titles)


def _version(raw: str | None, default: int) -> int:
    """A version typed in the form; anything unreadable means the default (the whole range)."""
    if raw is None or raw == "":
        return default
    try:
        return max(0, int(raw))
    except ValueError:
        return default


class BlastRadiusView(StaffRequiredMixin, HtmxPartialMixin, View):
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
        template = BLAST_REGION_TEMPLATE if named and self.wants_partial() else BLAST_TEMPLATE
        response = TemplateResponse(request, template, context)
        patch_vary_headers(response, ("HX-Request",))
        return response
