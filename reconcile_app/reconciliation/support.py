"""Freshness and support: which reads are current enough, and which evidence backs them.

Pure functions of their arguments (no ORM), so replay rebuilds exactly what they found.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from reconcile_app.canonical import canonical_json, rfc3339, same_value
from reconcile_app.choices import ContradictionKind, ReadStatus
from reconcile_app.reconciliation.types import EvidenceView, FieldRead


def apply_freshness(read: FieldRead, max_age_seconds: int, now: datetime) -> FieldRead:
    """An ok read whose owner-vouched time is older than the limit becomes `stale`."""
    if read.status != ReadStatus.OK:
        return read
    if read.observed_at is None:
        # An owner that vouches for no time cannot be shown to be fresh: fail closed.
        return FieldRead(
            **{**read.__dict__, "status": ReadStatus.STALE.value, "detail": "no observed_at"}
        )
    age = (now - read.observed_at).total_seconds()
    if age <= max_age_seconds:
        return read
    return FieldRead(
        **{
            **read.__dict__,
            "status": ReadStatus.STALE.value,
            "detail": f"observed {age:.0f}s before the decision; limit {max_age_seconds}s",
        }
    )


def _order(item: EvidenceView) -> tuple[datetime, str]:
    return (item.observed_at, item.evidence_id)


def latest_per_value(evidence: Iterable[EvidenceView]) -> list[EvidenceView]:
    """Of the unwithdrawn entries, the latest (by valid time, then id) stating each value of
    each subject's field: all that support and contradiction need to see."""
    latest: dict[tuple[str, str, str], EvidenceView] = {}
    for item in evidence:
        if item.withdrawn:
            continue
        key = (item.subject, item.field, canonical_json(item.value))
        best = latest.get(key)
        if best is None or _order(item) > _order(best):
            latest[key] = item
    return sorted(latest.values(), key=_order)


def support_for(
    subject: str, field: str, value: Any, evidence: Iterable[EvidenceView]
) -> list[EvidenceView]:
    """Retained, unwithdrawn evidence that says exactly this value, oldest first."""
    return sorted(
        (
            item
            for item in evidence
            if not item.withdrawn
            and item.subject == subject
            and item.field == field
            and same_value(item.value, value)
        ),
        key=lambda item: (item.observed_at, item.evidence_id),
    )


def source_contradictions(
    subject: str, reads: dict[str, FieldRead], evidence: list[EvidenceView]
) -> list[dict[str, Any]]:
    """Retained evidence observed after the state's valid time that disagrees with it."""
    found: list[dict[str, Any]] = []
    for read in reads.values():
        if read.status != ReadStatus.OK or read.valid_from is None:
            continue
        history = sorted(
            (
                item
                for item in evidence
                if not item.withdrawn and item.subject == subject and item.field == read.field
            ),
            key=lambda item: (item.observed_at, item.evidence_id),
        )
        if not history:
            continue
        latest = history[-1]
        if latest.observed_at > read.valid_from and not same_value(latest.value, read.value):
            found.append(
                {
                    "kind": ContradictionKind.EVIDENCE_VS_STATE.value,
                    "subject": subject,
                    "field": read.field,
                    "state": {
                        "value": read.value,
                        "source": read.source,
                        "ref": f"{read.source}@{read.version}",
                    },
                    "other": {
                        "value": latest.value,
                        "source": latest.source,
                        "ref": latest.evidence_id,
                    },
                    "detail": (
                        f"{latest.source} observed {latest.value!r} at "
                        f"{rfc3339(latest.observed_at)}, after the state's valid time "
                        f"{rfc3339(read.valid_from)}"
                    ),
                }
            )
    return found
