"""One snapshot as a person reads it: reads with their freshness, verdicts, contradictions.

Everything comes from the snapshot's stored, hashed `content`: it is what the decision was
made on, and reading it costs no query per field, claim or row. Only what changes after
issue (a contradiction's status) is read from its own table.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from reconcile_app.choices import ContradictionStatus, ReadStatus, Verdict
from reconcile_app.errors import NotFound
from reconcile_app.instants import stored_instant
from reconcile_app.models import Contract, Contradiction, DecisionSnapshot, Source

# Verdicts in the order a reviewer reads them: what disagrees first.
VERDICT_ORDER: tuple[str, ...] = (
    Verdict.CONTRADICTED,
    Verdict.STALE_STATE,
    Verdict.QUARANTINED,
    Verdict.SUPERSEDED,
    Verdict.UNVERIFIED,
    Verdict.OUT_OF_SCOPE,
    Verdict.CONFIRMED,
)


def verdict_counts(content: dict[str, Any]) -> list[tuple[str, int]]:
    """(verdict, count) for the snapshot's claims, in reading order, zero counts left out."""
    counts = Counter(claim["verdict"] for claim in content.get("claims", []))
    ordered = [(verdict, counts.pop(verdict)) for verdict in VERDICT_ORDER if verdict in counts]
    # A verdict this console does not know yet is still shown, never dropped.
    return ordered + sorted(counts.items())


@dataclass(frozen=True)
class FieldRow:
    name: str
    value: Any
    version: int | None
    source: str
    status: str
    required: bool
    observed_at: datetime | None
    valid_from: datetime | None
    recorded_at: datetime | None
    read_at: datetime | None
    max_age_seconds: int
    consistency: str
    evidence: list[str]
    detail: str
    # Age of the value at the decision's valid-time cut-off; None when nothing was observed.
    age_seconds: float | None
    # How it was read (`live` or `event_sourced`); "" on snapshots before content schema 3.
    mode: str = ""

    @property
    def fresh(self) -> bool | None:
        if self.age_seconds is None:
            return None
        return self.age_seconds <= self.max_age_seconds


@dataclass(frozen=True)
class ContradictionRow:
    pk: int | None
    kind: str
    field: str
    state_value: Any
    state_source: str
    state_ref: str
    other_value: Any
    other_source: str
    other_ref: str
    detail: str
    status: str
    resolved_at: datetime | None
    resolved_by: str
    resolution_note: str


@dataclass(frozen=True)
class SnapshotDetail:
    snapshot: DecisionSnapshot
    binding: dict[str, Any]
    contract: dict[str, Any]
    decision: dict[str, Any]
    completeness: str
    reducer_version: str | None
    schema_version: str
    valid_time: datetime | None
    recorded_time: datetime | None
    ledger_seq: int | None  # content schema 5 on: how far along the evidence chain it read
    fields: list[FieldRow]
    claims: list[dict[str, Any]]
    verdicts: list[tuple[str, int]]
    evidence_manifest: list[dict[str, str]]
    contradictions: list[ContradictionRow]


def field_rows(content: dict[str, Any], valid_time: datetime | None) -> list[FieldRow]:
    rows = []
    for name, item in content.get("fields", {}).items():
        observed_at = stored_instant(item.get("observed_at"))
        # Freshness is judged on what the owner vouches for (observed_at), against the valid
        # time the decision was made at — not on when the page is looked at.
        age = (
            (valid_time - observed_at).total_seconds()
            if observed_at is not None and valid_time is not None
            else None
        )
        rows.append(
            FieldRow(
                name=name,
                value=item.get("value"),
                version=item.get("version"),
                source=item.get("source", ""),
                status=item.get("status", ReadStatus.UNAVAILABLE),
                required=bool(item.get("required")),
                observed_at=observed_at,
                valid_from=stored_instant(item.get("valid_from")),
                recorded_at=stored_instant(item.get("recorded_at")),
                read_at=stored_instant(item.get("read_at")),
                max_age_seconds=int(item.get("max_age_seconds") or 0),
                consistency=item.get("consistency", ""),
                evidence=list(item.get("evidence", [])),
                detail=item.get("detail", ""),
                age_seconds=age,
                mode=item.get("mode", ""),
            )
        )
    return rows


def _contradiction_rows(
    content: dict[str, Any], rows: list[Contradiction]
) -> list[ContradictionRow]:
    if rows:
        return [
            ContradictionRow(
                pk=row.pk,
                kind=row.kind,
                field=row.field,
                state_value=row.state_value,
                state_source=row.state_source,
                state_ref=row.state_ref,
                other_value=row.other_value,
                other_source=row.other_source,
                other_ref=row.other_ref,
                detail=row.detail,
                status=row.status,
                resolved_at=row.resolved_at,
                resolved_by=row.resolved_by.username if row.resolved_by else "",
                resolution_note=row.resolution_note,
            )
            for row in rows
        ]
    # A snapshot's content always lists its contradictions; rows are the mutable status. If
    # rows are missing (never expected) the content is still shown rather than hidden.
    return [
        ContradictionRow(
            pk=None,
            kind=item["kind"],
            field=item["field"],
            state_value=item["state"]["value"],
            state_source=item["state"]["source"],
            state_ref=item["state"]["ref"],
            other_value=item["other"]["value"],
            other_source=item["other"]["source"],
            other_ref=item["other"]["ref"],
            detail=item.get("detail", ""),
            status=ContradictionStatus.OPEN,
            resolved_at=None,
            resolved_by="",
            resolution_note="",
        )
        for item in content.get("contradictions", [])
    ]


def console_snapshot_detail(*, snapshot_id: str) -> SnapshotDetail:
    """One snapshot as the detail page shows it. Two queries, whatever its size."""
    snapshot = DecisionSnapshot.objects.filter(snapshot_id=snapshot_id).first()
    if snapshot is None:
        raise NotFound(f"no snapshot {snapshot_id}", code="snapshot_not_found")
    content = snapshot.content
    rows = list(
        Contradiction.objects.filter(seen_in=snapshot).select_related("resolved_by").order_by("pk")
    )
    cutoffs = content.get("cutoffs", {})
    valid_time = stored_instant(cutoffs.get("valid_time"))
    return SnapshotDetail(
        snapshot=snapshot,
        binding=content["binding"],
        contract=content["contract"],
        decision=content["decision"],
        completeness=content["completeness"],
        reducer_version=content.get("reducer_version"),
        schema_version=content.get("schema_version", snapshot.schema_version),
        valid_time=valid_time,
        recorded_time=stored_instant(cutoffs.get("recorded_time")),
        ledger_seq=content.get("ledger_seq"),
        fields=field_rows(content, valid_time),
        claims=[
            {**claim, "written_at": stored_instant(claim.get("written_at"))}
            for claim in content.get("claims", [])
        ],
        verdicts=verdict_counts(content),
        evidence_manifest=list(content.get("evidence_manifest", [])),
        contradictions=_contradiction_rows(content, rows),
    )


def filter_suggestions() -> dict[str, list[str]]:
    """Known decision classes and sources, offered as suggestions in the filter form."""
    return {
        "decision_classes": list(
            Contract.objects.order_by("decision_class")
            .values_list("decision_class", flat=True)
            .distinct()
        ),
        "sources": list(Source.objects.order_by("name").values_list("name", flat=True)),
    }
