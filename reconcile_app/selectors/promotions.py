"""Reads for the reviewers' promotion queue: escalations that ask whether a suggested memory
may become active (services.promotions), with the memory, its writer, its class's kind and
what it would supersede — everything the queue shows, in one query per page."""

from __future__ import annotations

from django.db.models import OuterRef, QuerySet, Subquery

from reconcile_app.choices import PROMOTION, MemoryAdmission
from reconcile_app.models import Escalation, MemoryClass


def console_promotions() -> QuerySet[Escalation]:
    """Every promotion escalation, with its memory and the kind of the memory's class."""
    kind = MemoryClass.objects.filter(name=OuterRef("memory__memory_class")).values("kind")[:1]
    return (
        Escalation.objects.filter(code=PROMOTION, memory__isnull=False)
        .select_related("memory", "memory__supersedes", "requested_by", "decided_by")
        .annotate(class_kind=Subquery(kind))
    )


def reviewed_class_names() -> list[str]:
    """The classes whose memories wait for review, for the queue's filter suggestions."""
    return list(
        MemoryClass.objects.filter(admission=MemoryAdmission.REVIEW)
        .order_by("name")
        .values_list("name", flat=True)
    )
