"""Verify the evidence hash chain from the first entry to the head, and that every decision
snapshot still holds the content its id was derived from."""

from __future__ import annotations

from dataclasses import dataclass, field

from reconcile_app.canonical import content_hash
from reconcile_app.models import DecisionSnapshot, EvidenceEntry, LedgerHead
from reconcile_app.services.evidence import entry_hash_content

GENESIS = "0" * 64


@dataclass
class LedgerReport:
    checked: int = 0
    snapshots: int = 0
    head_hash: str = GENESIS
    problems: list[str] = field(default_factory=list)


def ledger_verify(*, batch_size: int = 2000) -> LedgerReport:
    report = LedgerReport()
    expected_prev = GENESIS
    expected_seq = 1
    entries = EvidenceEntry.objects.select_related("revokes", "supersedes", "recorded_by").order_by(
        "seq"
    )
    for entry in entries.iterator(chunk_size=batch_size):
        if entry.seq != expected_seq:
            report.problems.append(f"seq {expected_seq}: missing (next is {entry.seq})")
        if entry.prev_hash != expected_prev:
            report.problems.append(f"{entry.evidence_id}: prev_hash does not match its predecessor")
        if content_hash(entry_hash_content(entry)) != entry.hash:
            report.problems.append(f"{entry.evidence_id}: content does not match its hash")
        expected_prev = entry.hash
        expected_seq = entry.seq + 1
        report.checked += 1
    head = LedgerHead.objects.filter(pk=1).first()
    if head is not None and (head.seq != report.checked or head.hash != expected_prev):
        report.problems.append("ledger head does not match the last entry (entries removed?)")
    report.head_hash = expected_prev
    snapshots_verify(report, batch_size=batch_size)
    return report


def snapshots_verify(report: LedgerReport, *, batch_size: int) -> None:
    """A snapshot's id and `content_hash` are derived from its content when it is issued,
    and replay and the commit gate read the stored content: one edited in the database
    (a `deny` rewritten `allow`) must fail the check a restore runs, not only a replay of
    that one snapshot someone happens to ask for."""
    rows = DecisionSnapshot.objects.order_by("pk").values_list(
        "snapshot_id", "content_hash", "content"
    )
    for snapshot_id, digest, content in rows.iterator(chunk_size=batch_size):
        if content_hash(content) != digest or snapshot_id != f"snap_{digest[:32]}":
            report.problems.append(f"{snapshot_id}: content does not match its hash")
        report.snapshots += 1
