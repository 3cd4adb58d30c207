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
# How the lists shorten a snapshot id (`snap_` and 12 hex digits, then an ellipsis): what a
# person copies from a list, and the shortest prefix the box takes for one snapshot.
SHORTENED = "…"
SHORTEST_SNAPSHOT_PREFIX = len("snap_") + 12


@dataclass(frozen=True)
class GotoTarget:
    kind: str
    url: str


def goto_resolve(*, user: Any, text: str) -> GotoTarget | None:
    """The page `text` names, or None: at most one query per kind, stopping at the first."""
    text = text.strip()
    if not text or not is_staff_role(user):
        return None
    if text.endswith(SHORTENED):
        return _shortened_snapshot(text.removesuffix(SHORTENED))
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


def _shortened_snapshot(prefix: str) -> GotoTarget | None:
    """The one snapshot whose id begins `prefix`, as a list shows it; never a guess between
    two, nor from a prefix shorter than the lists show."""
    if not prefix.startswith("snap_") or len(prefix) < SHORTEST_SNAPSHOT_PREFIX:
        return None
    # The first two ids from the prefix on, by the unique index (a LIKE would scan them all):
    # the ids that begin with it come first.
    following = DecisionSnapshot.objects.filter(snapshot_id__gte=prefix).order_by("snapshot_id")
    found = [
        snapshot_id
        for snapshot_id in following.values_list("snapshot_id", flat=True)[:2]
        if snapshot_id.startswith(prefix)
    ]
    if len(found) != 1:
        return None
    return GotoTarget("snapshot", reverse("console-snapshot", args=[found[0]]))
