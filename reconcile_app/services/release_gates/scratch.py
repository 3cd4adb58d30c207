"""The scratch estate: rows the replay and correction drills need, always rolled back.

A drill writes what production writes (a principal, evidence entries on the hash-chained
ledger, a snapshot with its reads, receipt and lineage, a correction and its taint) inside
one `transaction.atomic()` that ends by raising a private exception: whatever the drill
found, or if it raised, nothing of it survives, and no `on_commit` hook registered inside
ever runs (Django drops a rolled-back block's hooks). Inside a caller's transaction this is
a savepoint, rolled back the same way. No owner system is read: the reads are the synthetic
ones of `world`, only the evidence is real ledger entries (for the scratch subject).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from reconcile_app.choices import EvidenceKind, PrincipalKind
from reconcile_app.models import DecisionSnapshot, Principal, Source
from reconcile_app.selectors.ledger import evidence_as_of
from reconcile_app.services.evidence import evidence_append
from reconcile_app.services.release_gates.world import SOURCE, STATE_AGE, SUBJECT, State, World
from reconcile_app.services.snapshots import snapshot_persist


class _ScratchRollback(Exception):
    """Ends every scratch estate, so its transaction always rolls back."""


@contextmanager
def scratch_estate() -> Iterator[None]:
    """Run the block in a transaction that is rolled back however the block ends."""
    try:
        with transaction.atomic():
            yield
            raise _ScratchRollback
    except _ScratchRollback:
        pass


def scratch_principal() -> Principal:
    """An agent that exists only inside the scratch estate (a random name, so two gate runs
    at once never wait on each other's unique index)."""
    name = f"release-gate-{secrets.token_hex(6)}"
    user = User(username=name, is_active=False)
    user.set_unusable_password()
    user.save()
    return Principal.objects.create(name=name, kind=PrincipalKind.AGENT, user=user)


@dataclass(frozen=True)
class ScratchSnapshot:
    snapshot: DecisionSnapshot
    state: State
    evidence: dict[str, str]  # field → the scratch ledger entry supporting it


def traced_field(world: World) -> str:
    """The required field whose support the drills write and correct: one that requires
    evidence if any (its support is what the decision rests on), else the first."""
    required = [field for field in world.spec.fields if field.required]
    return next((field for field in required if field.evidence_required), required[0]).name


def scratch_snapshot(world: World, principal: Principal) -> ScratchSnapshot:
    """Issue a snapshot under the contract version as `reconcile` would, in the state the
    policy allows (if any): the traced field and every field that requires evidence
    supported by a ledger entry (one append each: the other fields need none), one claim
    recalled from memory, then persisted by `snapshot_persist` (receipt, lineage, and an
    escalation when the decision escalates)."""
    state = world.allowed_state()
    state = replace(state, binding=replace(state.binding, principal=principal.name))
    supported = {traced_field(world)} | {
        field.name for field in world.spec.fields if field.evidence_required
    }
    entries = {
        field: evidence_append(
            kind=EvidenceKind.OBSERVATION,
            subject=SUBJECT,
            field=field,
            value=value,
            source=SOURCE,
            observed_at=world.now - STATE_AGE,
            note="release gate scratch estate",
            recorded_by=principal,
        ).evidence_id
        for field, value in state.values.items()
        if field in supported
    }
    # After the appends, as `reconcile` decides after its reads: the cut-off covers them.
    decided_at = timezone.now()
    now = world.at(decided_at)
    evidence = evidence_as_of(subject=SUBJECT, fields=set(state.values), recorded_by=decided_at)
    traced = traced_field(world)
    recalled = now.claim(traced, state.values[traced], memory_id="mem-release-gate")
    content = now.evaluate(state, evidence=evidence, claims=[recalled])
    sources = {
        source.name: source
        for source in Source.objects.filter(name__in={item.source for item in world.spec.fields})
    }
    snapshot = snapshot_persist(
        principal=principal,
        spec=world.spec,
        sources=sources,
        content=content,
        issued_at=decided_at,
    )
    return ScratchSnapshot(snapshot=snapshot, state=state, evidence=entries)
