"""The console's "go to" box: which page an id opens.

An id is looked up where each kind of id lives, in a fixed order, each on a unique index;
effects through what the caller may see (people in a role see all, anyone else only their
own), so the box never reveals what its page would refuse.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.urls import reverse

from reconcile_app.models import (
    Correction,
    DecisionSnapshot,
    Escalation,
    EvidenceEntry,
    MemoryRecord,
)
from reconcile_app.roles import is_staff_role
from reconcile_app.selectors.effects import effects_visible_to

# What the box accepts, in the order it looks (shown on the "nothing matches" page).
KINDS = ("snapshot", "effect key", "evidence", "memory", "escalation", "correction")


@dataclass(frozen=True)
class GotoTarget:
    kind: str
    url: str


def goto_resolve(*, user: Any, text: str) -> GotoTarget | None:
    """The page `text` names, or None: at most one query per kind, stopping at the first."""
    text = text.strip()
    if not text or not is_staff_role(user):
        return None
    if DecisionSnapshot.objects.filter(snapshot_id=text).exists():
        return GotoTarget("snapshot", reverse("console-snapshot", args=[text]))
    if effects_visible_to(user).filter(idempotency_key=text).exists():
        return GotoTarget("effect", reverse("console-effect", args=[text]))
    if EvidenceEntry.objects.filter(evidence_id=text).exists():
        return GotoTarget("evidence", reverse("console-evidence", args=[text]))
    if MemoryRecord.objects.filter(memory_id=text).exists():
        return GotoTarget("memory", reverse("console-memory", args=[text]))
    if Escalation.objects.filter(escalation_id=text).exists():
        return GotoTarget("escalation", reverse("console-escalation", args=[text]))
    if Correction.objects.filter(correction_id=text).exists():
        return GotoTarget("correction", reverse("console-correction", args=[text]))
    return None
