"""Console pages for memory: the declared classes with their rules and counts, and one memory
record with its history, derivation, supersession, promotion and lineage."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.views import View

from reconcile_app.choices import EscalationStatus, Role
from reconcile_app.console.mixins import StaffRequiredMixin, not_found_is_404
from reconcile_app.console.node_links import node_url
from reconcile_app.console.tables.memories import MemoryClassTable
from reconcile_app.errors import DomainError
from reconcile_app.roles import has_role
from reconcile_app.selectors.audit import object_timeline
from reconcile_app.selectors.memory_classes import RETIREMENT, memory_class_views, memory_classes
from reconcile_app.selectors.memory_detail import console_memory_detail

MEMORY_TEMPLATE = "reconcile_app/memory_detail.html"


class MemoryClassListView(StaffRequiredMixin, View):
    """Every declared class: kind, owner, TTL, admission, counts by status, quarantine."""

    def get(self, request: HttpRequest) -> HttpResponse:
        views = memory_class_views(classes=memory_classes(), user=request.user)
        return TemplateResponse(
            request,
            "reconcile_app/memory_class_list.html",
            {"table": MemoryClassTable(views), "classes": views},
        )


def memory_page(
    request: HttpRequest,
    memory_id: str,
    *,
    status: int = 200,
    error: DomainError | None = None,
    decided_as: str = "",
    draft: dict[str, str] | None = None,
) -> HttpResponse:
    """The memory's page; after a refused decision, with the refusal and the draft in place."""
    with not_found_is_404():
        detail = console_memory_detail(memory_id=memory_id)
    promotion = detail.promotion
    is_reviewer = has_role(request.user, Role.REVIEWER)
    wrote_it = detail.written_by(request.user)
    context: dict[str, Any] = {
        "detail": detail,
        "record": detail.record,
        "promotion": promotion,
        "derivations": [
            (item.reference, node_url(item.kind, item.ref)) for item in detail.derivations
        ],
        "retirement": RETIREMENT.get(detail.declared.kind, "") if detail.declared else "",
        "lineage_node": f"memory:{memory_id}",
        "is_reviewer": is_reviewer,
        "can_quarantine": has_role(request.user, Role.OPERATOR),
        "wrote_it": wrote_it,
        "can_decide": (
            promotion is not None
            and promotion.status == EscalationStatus.OPEN
            and is_reviewer
            and not wrote_it
        ),
        "error": error,
        "decided_as": decided_as,
        "draft": draft or {},
        "timeline": object_timeline(object_kind="memory", object_ref=memory_id),
    }
    return TemplateResponse(request, MEMORY_TEMPLATE, context, status=status)


class MemoryDetailView(StaffRequiredMixin, View):
    def get(self, request: HttpRequest, memory_id: str) -> HttpResponse:
        return memory_page(request, memory_id)
