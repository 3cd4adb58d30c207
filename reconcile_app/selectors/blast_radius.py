"""A blast-radius list to review: the snapshots, decisions, effects and memories downstream
of some lineage nodes, one kind and one page at a time, each with the row it names.

A lineage node only names its object (`kind:ref`); the object's own row says what a reviewer
needs (a snapshot's result, an effect's status, a memory's class). Each page of nodes costs
one query per kind shown, whatever the page size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, overload

from django.db.models import Exists, OuterRef

from lineage_app.selectors.blast import blast_radius
from reconcile_app.models import (
    Correction,
    DecisionReceipt,
    DecisionSnapshot,
    Effect,
    MemoryRecord,
    SnapshotTaint,
)
from reconcile_app.selectors.lineage import REVIEW_KINDS

__all__ = ["ReviewPage", "ReviewRow", "ReviewRows", "review_page"]


@dataclass(frozen=True)
class ReviewRow:
    """One node of a blast-radius list with the object it names (None if that object's row
    is gone or was never a console object). `recorded_at` is the node's, aware."""

    kind: str
    ref: str
    label: str
    recorded_at: datetime | None
    obj: Any
    tainted: bool = False

    @property
    def node_id(self) -> str:
        return f"{self.kind}:{self.ref}"


def _rows(kind: str, nodes: list[dict[str, Any]], correction: Correction | None) -> list[ReviewRow]:
    refs = [node["ref"] for node in nodes]
    objects: dict[str, Any] = {}
    if kind == "snapshot":
        snapshots = DecisionSnapshot.objects.filter(snapshot_id__in=refs)
        if correction is not None:
            snapshots = snapshots.annotate(
                tainted=Exists(
                    SnapshotTaint.objects.filter(snapshot=OuterRef("pk"), correction=correction)
                )
            )
        objects = {snapshot.snapshot_id: snapshot for snapshot in snapshots}
    elif kind == "decision":
        objects = {
            receipt.decision_id: receipt
            for receipt in DecisionReceipt.objects.filter(decision_id__in=refs).select_related(
                "snapshot"
            )
        }
    elif kind == "effect":
        objects = {
            effect.idempotency_key: effect
            for effect in Effect.objects.filter(idempotency_key__in=refs).select_related("source")
        }
    elif kind == "memory":
        objects = {
            memory.memory_id: memory
            for memory in MemoryRecord.objects.filter(memory_id__in=refs).select_related("agent")
        }
    rows = []
    for node in nodes:
        obj = objects.get(node["ref"])
        rows.append(
            ReviewRow(
                kind=kind,
                ref=node["ref"],
                label=node["label"],
                recorded_at=node["recorded_at"],
                obj=obj,
                tainted=bool(getattr(obj, "tainted", False)),
            )
        )
    return rows


class ReviewRows(Sequence[ReviewRow]):
    """A blast-radius list for django-tables2: its length is the count by kind, and a slice
    is one page read with `LIMIT`/`OFFSET`. The page the request asked for is read up front
    (with the counts, in the same call), so showing it costs no further query."""

    def __init__(
        self,
        *,
        roots: list[tuple[int, str]],
        kind: str,
        total: int,
        offset: int,
        first: list[ReviewRow],
        correction: Correction | None = None,
        as_of: datetime | None = None,
    ) -> None:
        self.roots, self.kind, self.total, self.correction = roots, kind, total, correction
        self.as_of = as_of
        self._pages: dict[tuple[int, int], list[ReviewRow]] = {(offset, offset + len(first)): first}
        self._first = (offset, first)

    def __len__(self) -> int:
        return self.total

    @overload
    def __getitem__(self, index: int) -> ReviewRow: ...

    @overload
    def __getitem__(self, index: slice) -> list[ReviewRow]: ...

    def __getitem__(self, index: int | slice) -> ReviewRow | list[ReviewRow]:
        if isinstance(index, int):
            return self[index : index + 1][0]
        start, stop, _ = index.indices(self.total)
        offset, first = self._first
        if start == offset and stop <= offset + len(first):
            return first[: stop - start]
        if (start, stop) not in self._pages:
            nodes = blast_radius(
                self.roots,
                as_of=self.as_of,
                kinds=[self.kind],
                limit=max(0, stop - start),
                offset=start,
            ).nodes
            self._pages[(start, stop)] = _rows(self.kind, nodes, self.correction)
        return self._pages[(start, stop)]


@dataclass(frozen=True)
class ReviewPage:
    counts: dict[str, int]
    kind: str
    rows: ReviewRows

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def review_counts(self) -> list[tuple[str, int]]:
        return [(kind, self.counts.get(kind, 0)) for kind in REVIEW_KINDS]

    def other_counts(self) -> list[tuple[str, int]]:
        return sorted((k, n) for k, n in self.counts.items() if k not in REVIEW_KINDS)


def review_page(
    *,
    roots: list[tuple[int, str]],
    kind: str | None,
    page: int,
    per_page: int,
    correction: Correction | None = None,
    as_of: datetime | None = None,
) -> ReviewPage:
    """Counts by kind downstream of the roots and one page of one review kind, as the
    lineage stood at `as_of` (now when None).

    Without a kind, the first review kind that has anything (snapshots, then decisions,
    effects, memories). Two queries for the counts and the page, one for their objects.
    """
    offset = (max(page, 1) - 1) * per_page
    wanted = kind if kind in REVIEW_KINDS else REVIEW_KINDS[0]
    radius = blast_radius(roots, as_of=as_of, kinds=[wanted], limit=per_page, offset=offset)
    if kind not in REVIEW_KINDS:
        found = next((k for k in REVIEW_KINDS if radius.counts.get(k)), wanted)
        if found != wanted:
            wanted = found
            radius = blast_radius(roots, as_of=as_of, kinds=[wanted], limit=per_page, offset=offset)
    rows = ReviewRows(
        roots=roots,
        kind=wanted,
        total=radius.counts.get(wanted, 0),
        offset=offset,
        first=_rows(wanted, radius.nodes, correction) if radius.nodes else [],
        correction=correction,
        as_of=as_of,
    )
    return ReviewPage(counts=radius.counts, kind=wanted, rows=rows)
