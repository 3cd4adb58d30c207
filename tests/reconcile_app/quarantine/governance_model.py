"""What a stateful model of memory governance and operator controls keeps
(test_governance_stateful.py): the snapshots it was issued, the memories it wrote, the
evidence it attested and what withdrew it, the quarantines in force, the operator actions it
expects an audit row for, and the derivation graph the lineage must contain. The checks are
the invariants DESIGN.md and docs/api.md state, asked of the database and the API."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.test import TestCase

from reconcile_app.models import (
    AuditEvent,
    DecisionSnapshot,
    Effect,
    Escalation,
    MemoryRecord,
    MemoryStatusEvent,
    Quarantine,
)
from reconcile_app.services.references import split_reference
from tests.reconcile_app.effects.lifecycle_model import Clock  # commit windows, expiry

# The operator and reviewer actions the model takes; each must leave exactly one row.
AUDITED = (
    "quarantine.create",
    "quarantine.lift",
    "correction.create",
    "escalation.approve",
    "escalation.reject",
    "escalation.approve.refused",
    "escalation.reject.refused",
    "memory.promote",
    "memory.reject",
    "contract.activation_requested",
    "contract.activate",
    "contract.rollback",
    "contract.retire",
)
DIRECT = ("episodic", "case-notes")  # the memory classes admitted without review


def request(send: Any) -> Any:
    """One API request, its on-commit work (quarantine apply, readbacks) run as a committed
    request's would be."""
    with TestCase.captureOnCommitCallbacks(execute=True):
        return send()


@dataclass
class Snap:
    snapshot_id: str
    action: str
    result: str
    permitted: list[str]
    version: int
    contract: str
    issued_at: datetime
    evidence: set[str]
    read_ok: set[str]
    escalation_id: str | None
    row: tuple[Any, ...]


@dataclass
class Mem:
    memory_id: str
    memory_class: str
    status: str
    writer: str
    derived_from: list[str]
    escalation_id: str | None = None
    valid_until: str = ""


@dataclass
class Model:
    clock: Clock = field(default_factory=Clock)
    snaps: dict[str, Snap] = field(default_factory=dict)
    memories: dict[str, Mem] = field(default_factory=dict)
    evidence: list[str] = field(default_factory=list)
    revocations: set[str] = field(default_factory=set)  # entries that revoke another
    withdrawn: set[str] = field(default_factory=set)  # revoked or superseded entries
    corrected: set[str] = field(default_factory=set)
    tainted: set[str] = field(default_factory=set)  # snapshots a correction reached
    quarantines: dict[tuple[str, str], str] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)  # idempotency key → code
    committed: dict[str, str] = field(default_factory=dict)  # key → snapshot id
    audits: Counter[tuple[str, str]] = field(default_factory=Counter)
    # Derivation edges, child node → parent nodes (`kind:ref`), as the lineage must hold them.
    parents: dict[str, set[str]] = field(default_factory=dict)
    active_contract: str = "7.3"
    retired: set[str] = field(default_factory=set)
    went_live: datetime | None = None
    keys: int = 0
    audit_floor: int = 0  # rows before the model's first step (the estate's loading)

    def quarantined(self, scope: str) -> set[str]:
        return {target for (kind, target) in self.quarantines if kind == scope}

    def derive(self, child: str, *parents: str) -> None:
        self.parents.setdefault(child, set()).update(parents)

    def downstream(self, root: str) -> set[str]:
        """Every node the model knows derives from `root`, however far down."""
        children: dict[str, set[str]] = {}
        for child, parents in self.parents.items():
            for parent in parents:
                children.setdefault(parent, set()).add(child)
        found: set[str] = set()
        todo = [root]
        while todo:
            for child in children.get(todo.pop(), ()):
                if child not in found:
                    found.add(child)
                    todo.append(child)
        return found

    def audited(self, action: str, actor: str) -> None:
        self.audits[(action, actor)] += 1

    def check(self) -> None:
        """The invariants, after every step."""
        for snap in self.snaps.values():
            assert snapshot_row(snap.snapshot_id) == snap.row, f"{snap.snapshot_id} changed"
        self._effects_check()
        self._memories_check()
        self._audit_check()
        active = Quarantine.objects.filter(status__in=["applying", "applied"])
        held = set(active.values_list("scope", "target"))
        assert held == set(self.quarantines), (held, set(self.quarantines))
        assert not active.filter(status="applying").exists(), "a quarantine never applied"

    def _effects_check(self) -> None:
        # A refused commit stays refused: no lift, approval or rollback turns it into an
        # effect behind the agent's back.
        assert not Effect.objects.filter(idempotency_key__in=list(self.refused)).exists()
        for key, snapshot_id, escalation in Effect.objects.values_list(
            "idempotency_key", "snapshot__snapshot_id", "escalation__escalation_id"
        ):
            assert self.committed.get(key) == snapshot_id, (key, snapshot_id)
            snap = self.snaps[snapshot_id]
            # A remembered belief never authorises: only the snapshot's own decision on the
            # owners' reads, or a reviewer's approval of its escalation.
            if escalation is None:
                assert snap.result == "allow", (key, snap)
            else:
                assert snap.result == "escalate" and escalation == snap.escalation_id, key

    def _memories_check(self) -> None:
        rows = dict(MemoryRecord.objects.values_list("memory_id", "status"))
        assert rows == {m: mem.status for m, mem in self.memories.items()}, rows
        for memory_id, status in rows.items():
            last = (
                MemoryStatusEvent.objects.filter(memory__memory_id=memory_id)
                .order_by("-at", "-id")
                .values_list("status", flat=True)
                .first()
            )
            assert last == status, (memory_id, last, status)
        # A suggestion and its question are open together, and settled together.
        for memory_id, mem in self.memories.items():
            if mem.escalation_id is None:
                continue
            escalation = Escalation.objects.get(escalation_id=mem.escalation_id)
            settled = {"open": "suggested", "approved": "active", "rejected": "rejected"}
            assert settled[escalation.status] == mem.status or (
                escalation.status == "approved" and mem.status in ("superseded", "expired")
            ), (memory_id, escalation.status, mem.status)

    def _audit_check(self) -> None:
        rows = AuditEvent.objects.filter(action__in=AUDITED, id__gt=self.audit_floor)
        found = Counter(rows.values_list("action", "actor_name"))
        assert found == self.audits, (found, self.audits)
        for row in rows:
            assert row.at is not None and row.actor_name, row
            assert row.reason.strip(), f"{row.action} on {row.object_ref} says no why"


def snapshot_row(snapshot_id: str) -> tuple[Any, ...]:
    row = DecisionSnapshot.objects.filter(snapshot_id=snapshot_id).values_list(
        "content_hash", "content", "result", "issued_at", "principal_id", "contract_id"
    )
    return tuple(row.get())


def node_of(ref: str) -> str:
    """A `derived_from` reference as a lineage node, resolved as the product resolves it (a
    bare `snap_…` is a snapshot's, as a receipt or readback names it; else an evidence id)."""
    return ":".join(split_reference(ref))


def reads_of(content: dict[str, Any]) -> dict[str, tuple[Any, Any, str]]:
    """What a snapshot read, field by field: an approval stands only at the state it saw."""
    return {
        name: (read.get("value"), read.get("version"), read["status"])
        for name, read in content["fields"].items()
    }
