"""Resolve the references a memory or evidence entry is derived from.

A reference is `kind:ref` (`evidence:ev-001`, `snapshot:snap_…`, `memory:mem-…`) or a bare
evidence id / snapshot id. Resolution is one query per kind, however many references.
"""

from __future__ import annotations

from collections.abc import Iterable

from reconcile_app.models import DecisionSnapshot, EvidenceEntry, MemoryRecord, Principal

KINDS = ("evidence", "snapshot", "memory")


def split_reference(reference: str) -> tuple[str, str]:
    kind, sep, ref = reference.partition(":")
    if sep and kind in KINDS:
        return kind, ref
    if reference.startswith("snap_"):
        return "snapshot", reference
    return "evidence", reference


def missing_references(
    references: Iterable[str], *, visible_to: Principal | None = None
) -> list[str]:
    """The references that name nothing. With `visible_to` (an agent), another principal's
    snapshot or memory counts as missing too: it is not the caller's to derive from."""
    wanted: dict[str, dict[str, str]] = {kind: {} for kind in KINDS}
    for reference in references:
        kind, ref = split_reference(reference)
        wanted[kind][ref] = reference
    found: set[str] = set()
    if wanted["evidence"]:
        found |= {
            wanted["evidence"][ref]
            for ref in EvidenceEntry.objects.filter(evidence_id__in=wanted["evidence"]).values_list(
                "evidence_id", flat=True
            )
        }
    if wanted["snapshot"]:
        found |= {
            wanted["snapshot"][ref]
            for ref in DecisionSnapshot.objects.filter(
                snapshot_id__in=wanted["snapshot"],
                **({"principal": visible_to} if visible_to is not None else {}),
            ).values_list("snapshot_id", flat=True)
        }
    if wanted["memory"]:
        found |= {
            wanted["memory"][ref]
            for ref in MemoryRecord.objects.filter(
                memory_id__in=wanted["memory"],
                **({"agent": visible_to} if visible_to is not None else {}),
            ).values_list("memory_id", flat=True)
        }
    return [ref for kind in KINDS for ref in wanted[kind].values() if ref not in found]
