"""Persist an issued snapshot: the snapshot, its reads, verdicts, contradictions, decision
receipt, escalation and lineage, wholly there or not at all — one PostgreSQL statement
(services/snapshot_statement.py) or, for escalations and on SQLite, one ORM transaction."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import IntegrityError, connection, transaction

from config.insert_batch import InsertBatch
from lineage_app.services.graph import graph_record
from reconcile_app.canonical import canonical, sha256_hex
from reconcile_app.choices import ContradictionKind, ContradictionStatus, DecisionResult
from reconcile_app.models import (
    ClaimVerdict,
    Contract,
    Contradiction,
    DecisionReceipt,
    DecisionSnapshot,
    Escalation,
    Principal,
    ReconcileTiming,
    Source,
    StateRead,
)
from reconcile_app.reconciliation.types import ContractSpec
from reconcile_app.selectors.approvals import SnapshotRelations, relations_issued
from reconcile_app.services.conflicts import escalation_conflict_key
from reconcile_app.services.escalations import escalation_for_snapshot
from reconcile_app.services.provenance import snapshot_links
from reconcile_app.services.quarantine import epoch_check
from reconcile_app.services.snapshot_rows import snapshot_rows
from reconcile_app.services.snapshot_statement import snapshot_statement_send
from reconcile_app.services.timings import reconcile_timing_row


class QuarantineChanged(Exception):
    """The set of quarantines moved while this reconcile ran: run it again."""


def snapshot_persist(
    *,
    principal: Principal,
    spec: ContractSpec,
    sources: dict[str, Source],
    content: dict,
    issued_at: datetime,
    quarantine_epoch: int | None = None,
    contract: Contract | None = None,
    arrived: float | None = None,
) -> DecisionSnapshot:
    """Insert the snapshot and everything issued with it; an identical one already stored is
    returned instead. A new snapshot comes back with its relations filled in (contract,
    contradictions, escalation, no taint), so representing it reads nothing more."""
    encoded = canonical(content)
    digest = sha256_hex(encoded.text)
    try:
        return _snapshot_insert(
            principal=principal,
            spec=spec,
            sources=sources,
            content=content,
            issued_at=issued_at,
            digest=digest,
            # The hashed text is the content's JSON too, unless it respelled a value.
            content_json=encoded.text if encoded.exact else None,
            quarantine_epoch=quarantine_epoch,
            contract=contract,
            arrived=arrived,
        )
    except IntegrityError:
        # Content-addressed: identical content is the identical snapshot, already stored.
        existing = DecisionSnapshot.objects.filter(content_hash=digest).first()
        if existing is None:
            raise
        return existing


def _snapshot_insert(
    *,
    principal: Principal,
    spec: ContractSpec,
    sources: dict[str, Source],
    content: dict,
    issued_at: datetime,
    digest: str,
    content_json: str | None,
    quarantine_epoch: int | None,
    contract: Contract | None,
    arrived: float | None = None,
) -> DecisionSnapshot:
    rows = snapshot_rows(
        principal=principal,
        spec=spec,
        sources=sources,
        content=content,
        issued_at=issued_at,
        digest=digest,
    )
    links, labels = snapshot_links(
        snapshot_id=rows.snapshot["snapshot_id"],
        decision_id=rows.receipt["decision_id"],
        content=content,
    )
    escalates = content["decision"]["result"] == DecisionResult.ESCALATE
    if connection.vendor == "postgresql" and not escalates:
        # One statement, atomic by itself: no BEGIN, no COMMIT, no ORM per row.
        sent = snapshot_statement_send(
            rows,
            content_json=content_json,
            links=links,
            labels=labels,
            issued_at=issued_at,
            quarantine_epoch=quarantine_epoch,
            arrived=arrived,
        )
        if sent is None:
            raise QuarantineChanged
        snapshot, seen = sent
        _fill_relations(snapshot, contract, seen, None)
        return snapshot
    with transaction.atomic():
        if quarantine_epoch is not None and not epoch_check(quarantine_epoch):
            raise QuarantineChanged
        snapshot = DecisionSnapshot.objects.create(**rows.snapshot)
        # Rows whose ids nothing reads go out together at the end (one statement on
        # PostgreSQL); the snapshot's own id is needed by all of them, so it goes first.
        batch = InsertBatch()
        batch.add(StateRead, [StateRead(snapshot=snapshot, **row) for row in rows.reads])
        batch.add(ClaimVerdict, [ClaimVerdict(snapshot=snapshot, **row) for row in rows.verdicts])
        escalation = None
        if escalates:
            escalation = escalation_for_snapshot(
                snapshot=snapshot,
                conflict_key=escalation_conflict_key(content),
                owner=_escalation_owner(spec, sources, content),
                reasons=content["decision"]["reasons"],
                candidate_refs=[snapshot.snapshot_id]
                + [
                    item["other"]["ref"]
                    for item in content["contradictions"]
                    if item["kind"] == ContradictionKind.EVIDENCE_VS_STATE
                ],
                requested_by=principal,
                commit_window_seconds=spec.commit_window_seconds,
            )
        graph_record(links, labels=labels, batch=batch)
        batch.add(DecisionReceipt, [DecisionReceipt(snapshot=snapshot, **rows.receipt)])
        # Last: an open contradiction's row is shared by every reconcile that sees it again,
        # and its lock is held until the commit, so it is taken as late as possible.
        seen = contradictions_record(snapshot, rows.contradictions, issued_at, batch)
        if arrived is not None:
            batch.add(
                ReconcileTiming,
                [reconcile_timing_row(snapshot=snapshot, arrived=arrived)],
            )
        batch.send()
    _fill_relations(snapshot, contract, seen, escalation)
    return snapshot


def _fill_relations(
    snapshot: DecisionSnapshot,
    contract: Contract | None,
    seen: list[Contradiction],
    escalation: Escalation | None,
) -> None:
    """What the snapshot's representation reads, as just written (no query needed)."""
    if contract is not None and contract.pk == snapshot.contract_id:
        snapshot.contract = contract
    relations_issued(
        snapshot,
        SnapshotRelations(
            contradictions_seen=sorted(seen, key=lambda row: row.pk),
            # One the snapshot opened, or the open one its retry joined.
            escalations=[escalation] if escalation is not None else [],
            tainted_by=[],  # nothing is downstream of a snapshot just issued
        ),
    )


def contradictions_record(
    snapshot: DecisionSnapshot,
    found: dict[str, dict[str, Any]],
    issued_at: datetime,
    batch: InsertBatch,
) -> list[Contradiction]:
    """One row per disagreement while it stays open: a retry that sees the same one again
    joins that row (`seen_in`, `last_seen_at`) instead of adding another to triage."""
    if not found:
        return []
    open_rows = {row.signature: row for row in _open_rows_touch(list(found), issued_at)}
    new_rows = Contradiction.objects.bulk_create(
        Contradiction(snapshot=snapshot, **row)
        for signature, row in found.items()
        if signature not in open_rows
    )
    seen = [*open_rows.values(), *new_rows]
    Through = Contradiction.seen_in.through
    batch.add(
        Through,
        [Through(contradiction_id=row.pk, decisionsnapshot_id=snapshot.pk) for row in seen],
    )
    return seen


def _open_rows_touch(signatures: list[str], seen_at: datetime) -> list[Contradiction]:
    """The open contradictions with these signatures, their `last_seen_at` moved to `seen_at`
    and locked until the commit, in one `UPDATE … RETURNING` (both engines support it; the
    ORM's update returns only a count, so the rows would cost a second statement)."""
    quote = connection.ops.quote_name
    columns = ", ".join(quote(field.column) for field in Contradiction._meta.concrete_fields)
    placeholders = ", ".join(["%s"] * len(signatures))
    # Identifiers come from the model's metadata; every value is a parameter.
    sql = (
        f"UPDATE {quote(Contradiction._meta.db_table)} SET {quote('last_seen_at')} = %s "  # noqa: S608  # nosec B608
        # `status || ''` keeps the planner off the status index: without statistics SQLite
        # chose it over the signature's, and walked every open contradiction on each
        # reconcile (an incident holds thousands).
        f"WHERE {quote('signature')} IN ({placeholders}) AND {quote('status')} || '' = %s "
        f"RETURNING {columns}"
    )
    params = [
        connection.ops.adapt_datetimefield_value(seen_at),
        *signatures,
        ContradictionStatus.OPEN.value,
    ]
    return list(Contradiction.objects.raw(sql, params))


def _escalation_owner(spec: ContractSpec, sources: dict[str, Source], content: dict) -> str:
    """Route to the owner of the contradicted field's source, else of the first required one."""
    for item in content["contradictions"]:
        if item["kind"] == ContradictionKind.EVIDENCE_VS_STATE:
            return sources[item["state"]["source"]].owner
    first_required = next(spec_field for spec_field in spec.fields if spec_field.required)
    return sources[first_required.source].owner
