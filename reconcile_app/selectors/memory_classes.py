"""Reads of the declared memory classes: each with its kind's rules, how many memories of it
the caller can see in each status, and whether it is quarantined.

Every authenticated principal reads the classes (an agent must know what it may write and
under which rules), but the counts are scoped like every other read of memories
(docs/api.md "Who reads what"): an agent counts its own memories, people count everyone's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count

from reconcile_app.choices import MemoryKind, MemoryStatus, QuarantineScope
from reconcile_app.errors import NotFound
from reconcile_app.models import MemoryClass, Quarantine
from reconcile_app.selectors.ledger import memories_visible_to
from reconcile_app.services.memory_rules import EXPIRING_KINDS
from reconcile_app.services.quarantine import in_force

# How each kind leaves force (seed 000: "four kinds of memory, four retirement rules").
RETIREMENT: dict[str, str] = {
    MemoryKind.EPISODIC: "expires at its valid_until (default: the class's TTL)",
    MemoryKind.PREFERENCE: (
        "expires at its valid_until (default: the class's TTL); a newer preference for the "
        "same subject and field supersedes it"
    ),
    MemoryKind.PROCEDURAL: "retires only by review, never by date",
    MemoryKind.POLICY: "retires only by review, never by date",
    MemoryKind.FACT: "selected by the owner's rule; retired by its valid_until or supersession",
}


@dataclass(frozen=True)
class MemoryClassView:
    """One declared class, the caller's counts of its memories and its quarantine (if any)."""

    memory_class: MemoryClass
    counts: dict[str, int] = field(default_factory=dict)
    quarantine: Quarantine | None = None

    @property
    def name(self) -> str:
        return self.memory_class.name

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def quarantined(self) -> bool:
        return self.quarantine is not None

    @property
    def expires_by_date(self) -> bool:
        return self.memory_class.kind in EXPIRING_KINDS

    @property
    def retirement(self) -> str:
        return RETIREMENT.get(self.memory_class.kind, "")


def memory_classes() -> Any:
    """Every declared class, by name (a queryset: the API pages and filters it)."""
    return MemoryClass.objects.order_by("name")


def memory_class_views(*, classes: Iterable[MemoryClass], user: Any) -> list[MemoryClassView]:
    """The classes given, each with the caller's status counts and its active quarantine.

    Two queries however many classes and memories: one aggregate over the memories the
    caller may read, one over the active quarantines of those classes.
    """
    classes = list(classes)
    names = [declared.name for declared in classes]
    counts: dict[str, dict[str, int]] = {
        name: dict.fromkeys(MemoryStatus.values, 0) for name in names
    }
    if names:
        rows = (
            memories_visible_to(user)
            .filter(memory_class__in=names)
            .order_by()
            .values_list("memory_class", "status")
            .annotate(n=Count("pk"))
        )
        for name, status, n in rows:
            counts[name][status] = n
    quarantines = (
        {
            row.target: row
            for row in Quarantine.objects.filter(
                in_force(), scope=QuarantineScope.MEMORY_CLASS, target__in=names
            ).order_by("created_at")
        }
        if names
        else {}
    )
    return [
        MemoryClassView(
            memory_class=declared, counts=counts[declared.name], quarantine=quarantines.get(name)
        )
        for declared, name in zip(classes, names, strict=True)
    ]


def memory_class_view(*, name: str, user: Any) -> MemoryClassView:
    declared = MemoryClass.objects.filter(name=name).first()
    if declared is None:
        raise NotFound(f"no memory class {name!r} is declared", code="memory_class_not_found")
    return memory_class_views(classes=[declared], user=user)[0]
