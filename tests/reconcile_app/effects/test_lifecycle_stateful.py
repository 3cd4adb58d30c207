"""A stateful model of the effect lifecycle (hypothesis RuleBasedStateMachine) against the
real API on the test database.

Its rules interleave what happens to effects in production: an agent reconciles and commits
(fresh or reused Idempotency-Key, current or stale If-Match), the owner's record changes
underneath, the owner faults (the sandbox's fault injection), the database fails part-way,
the sweep runs (time passing), workers run the queued readbacks and resolutions, operators
ask for a check or resolve an unknown outcome, a source is quarantined and released, and
evidence a snapshot used is corrected. After every step the invariants hold (lifecycle_model:
one effect per key, the owner ran each key at most once, every status change on the
timeline is one docs/api.md allows and the timeline ends at the row's status, no snapshot
changes, no effect without an `allow` for its action at the version read); whenever time
passes with a healthy owner, every accepted effect reaches a readback conclusion and nothing
is left recorded or sent. Each example runs in a savepoint rolled back at its end.

Bounded to stay fast (20 examples of 25 steps); LIFECYCLE_EXAMPLES=400 hunts longer.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, ClassVar

import pytest
from django.db import transaction
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from reconcile_app.models import Effect
from reconcile_app.services.effects.sweep import effects_sweep
from reconcile_app.services.evidence import evidence_append
from sandbox_app.models import SandboxEffect, SandboxRecord
from sandbox_app.services import sandbox_fault_add, sandbox_faults_clear, sandbox_record_write
from tests.conftest import COLLECTIONS, Persona
from tests.reconcile_app.effects.conftest import SUBJECT
from tests.reconcile_app.effects.lifecycle_model import World

FIELD = "collections_status"
WRITES = {"release_collections_hold": "released", "retain_manual_review": "manual_review"}
SOURCES = ("case-service", "complaints-service")
FAULTS = ("unavailable", "timeout_after_commit", "drop_postcondition", "lag", "lose_dedupe_record")
WINDOW = timedelta(seconds=120)  # the contract's commit_window_seconds


@dataclass
class Snap:
    snapshot_id: str
    action: str
    result: str
    permitted: list[str]
    version: int
    issued_at: Any
    evidence: set[str]
    read_ok: set[str]


class EffectLifecycle(RuleBasedStateMachine):
    world: ClassVar[World]
    agent: ClassVar[Persona]
    operator: ClassVar[Persona]

    def __init__(self) -> None:
        super().__init__()
        self.savepoint = transaction.atomic()
        self.savepoint.__enter__()
        self.world.reset()
        self.snaps: list[Snap] = []
        self.fingerprints: dict[str, tuple[str, str, Any, int]] = {}
        self.keys = 0
        self.tainted: set[str] = set()
        self.quarantines: dict[str, str] = {}  # source → quarantine id
        self.evidence = ["ev-collect"]

    def teardown(self) -> None:
        try:
            self.settle()
        finally:
            transaction.set_rollback(True)
            self.savepoint.__exit__(None, None, None)

    # The agent.

    @rule(action=st.sampled_from(sorted(WRITES)))
    def reconcile(self, action: str) -> None:
        body = {
            "subject": SUBJECT,
            "purpose": "collections",
            "decision_class": COLLECTIONS,
            "proposed_action": action,
        }
        response = self.world.request(lambda: self.agent.post("/api/v1/reconcile", body))
        assert response.status_code == 201, response.content
        snap = response.json()
        fields = snap["fields"]
        self.snaps.append(
            Snap(
                snapshot_id=snap["snapshot_id"],
                action=action,
                result=snap["decision"]["result"],
                permitted=snap["decision"]["permitted_actions"],
                version=(fields.get(FIELD) or {}).get("version") or 0,
                issued_at=self.world.clock.now(),
                evidence={e for read in fields.values() for e in read.get("evidence", [])},
                read_ok={read["source"] for read in fields.values() if read["status"] == "ok"},
            )
        )
        self.world.snapshot_seen(snap["snapshot_id"])

    @precondition(lambda self: self.snaps)
    @rule(
        data=st.data(),
        key=st.sampled_from(["fresh", "retry", "reused"]),
        if_match=st.sampled_from(["read", "stale", "owner"]),
        other_action=st.booleans(),
    )
    def commit(self, data: Any, key: str, if_match: str, other_action: bool) -> None:
        """A commit under a fresh key, a retry of an earlier request under its key, or an
        earlier key reused for this request."""
        if key != "fresh" and self.fingerprints:
            reused = data.draw(st.sampled_from(sorted(self.fingerprints)), label="key")
            if key == "retry":
                snapshot_id, action, _, version = self.fingerprints[reused]
                snap = next(s for s in self.snaps if s.snapshot_id == snapshot_id)
                self._commit(snap, reused, action, version)
                return
        else:
            self.keys += 1
            reused = f"k{self.keys}"
        snap = data.draw(st.sampled_from(self.snaps), label="snapshot")
        action = sorted(WRITES)[0] if other_action else snap.action
        version = {
            "read": snap.version,
            "stale": max(snap.version - 1, 0),
            "owner": _owner_record().version,
        }[if_match]
        self._commit(snap, reused, action, version)

    @rule(data=st.data())
    def agent_retries(self, data: Any) -> None:
        """The agent retries a request it has no final answer for, under the same key."""
        open_keys = Effect.objects.filter(status__in=["recorded", "sent", "rejected", "unknown"])
        keys = sorted(
            set(open_keys.values_list("idempotency_key", flat=True)) & set(self.fingerprints)
        )
        if keys:
            key = data.draw(st.sampled_from(keys), label="key")
            snapshot_id, action, _, version = self.fingerprints[key]
            snap = next(s for s in self.snaps if s.snapshot_id == snapshot_id)
            self._commit(snap, key, action, version)

    @rule(
        action=st.sampled_from(sorted(WRITES)),
        meanwhile=st.sampled_from([None, "owner_writes", *FAULTS]),
        attested=st.booleans(),
    )
    def reconcile_and_commit(self, action: str, meanwhile: str | None, attested: bool) -> None:
        """The agent's usual step: decide, then act on the decision at once; `attested`, the
        case ledger observed the owner's value first (its evidence); `meanwhile`, between
        the two, the owner's record moves on or a fault is set for the commit."""
        if attested:
            self._attest(_owner_record().value)
        self.reconcile(action)
        if meanwhile == "owner_writes":
            self.owner_writes("collect", attest=False)
        elif meanwhile is not None:
            sandbox_fault_add(source="case-service", kind=meanwhile, count=1, seconds=30)
        self.keys += 1
        self._commit(self.snaps[-1], f"k{self.keys}", action, self.snaps[-1].version)

    def _commit(self, snap: Snap, key: str, action: str, version: int) -> None:
        was = Effect.objects.filter(idempotency_key=key).values_list("status", flat=True).first()
        body = {
            "snapshot_id": snap.snapshot_id,
            "action": action,
            "resulting_value": WRITES[action],
        }
        response = self.world.request(
            lambda: self.agent.post(
                "/api/v1/effects", body, HTTP_IDEMPOTENCY_KEY=key, HTTP_IF_MATCH=f'"{version}"'
            )
        )
        assert response.status_code < 500 or response.json()["code"] in (
            "owner_unavailable",
            "database_unavailable",
        ), response.content
        fingerprint = (snap.snapshot_id, action, WRITES[action], version)
        known = self.fingerprints.get(key)
        if was is not None and known != fingerprint:
            assert response.json()["code"] == "idempotency_key_reused", response.content
            return
        now = Effect.objects.filter(idempotency_key=key).values_list("status", flat=True).first()
        sent_again = was == "rejected" and now != "rejected"
        if (was is None and now is not None) or sent_again:
            # The gate let it through: the model agrees it should have.
            self.fingerprints[key] = fingerprint
            assert snap.result == "allow" and action in snap.permitted, (snap, action)
            assert version == snap.version
            assert snap.snapshot_id not in self.tainted, "a tainted snapshot authorised"
            assert not (snap.read_ok | {"case-service"}) & set(self.quarantines), "quarantined"
            assert self.world.clock.now() - snap.issued_at <= WINDOW + timedelta(seconds=5)
        if response.status_code in (200, 201, 202):
            assert response.json()["status"] == now, (response.json(), now)

    # The owner.

    @rule(value=st.sampled_from(["collect", "hold", "manual_review"]), attest=st.booleans())
    def owner_writes(self, value: str, attest: bool) -> None:
        sandbox_record_write(source="case-service", subject=SUBJECT, field=FIELD, value=value)
        if attest:
            self._attest(value)

    def _attest(self, value: Any) -> None:
        entry = evidence_append(
            kind="observation",
            subject=SUBJECT,
            field=FIELD,
            value=value,
            source="case-ledger",
            observed_at=self.world.clock.now(),
        )
        self.evidence.append(entry.evidence_id)

    @rule(complaint=st.sampled_from(["none", "open"]))
    def complaint(self, complaint: str) -> None:
        sandbox_record_write(
            source="complaints-service", subject=SUBJECT, field="complaint_status", value=complaint
        )

    @rule(kind=st.sampled_from(FAULTS), count=st.sampled_from([1, 2, None]))
    def owner_faults(self, kind: str, count: int | None) -> None:
        sandbox_fault_add(source="case-service", kind=kind, count=count, seconds=30)

    @rule()
    def owner_recovers(self) -> None:
        sandbox_faults_clear(source="case-service")

    @rule(point=st.sampled_from(["record", "send", "accept", "stall"]))
    def trouble_next(self, point: str) -> None:
        """The database fails at the next effect's record, its send (recorded, never sent)
        or its accept (or unknown), once; or
        the next sender stalls with the owner's answer in hand (lifecycle_model.World)."""
        self.world.armed.add(point)

    # Time, the sweep and the workers.

    @rule(seconds=st.sampled_from([0, 61]))
    def sweep(self, seconds: int) -> None:
        self.world.clock.offset += timedelta(seconds=seconds)
        try:
            effects_sweep()
        except Exception as exc:  # an injected failure ends this sweep; the next one goes on
            assert "injected" in str(exc), exc

    @rule(count=st.integers(1, 3))
    def worker(self, count: int) -> None:
        self.world.work(count)

    # Operators.

    @precondition(lambda self: self.fingerprints)
    @rule(data=st.data())
    def operator_asks_readback(self, data: Any) -> None:
        key = data.draw(st.sampled_from(sorted(self.fingerprints)), label="key")
        response = self.world.request(
            lambda: self.operator.post(f"/api/v1/effects/{key}/readback", {})
        )
        assert response.status_code in (202, 409), response.content

    @precondition(lambda self: self.fingerprints)
    @rule(
        data=st.data(),
        outcome=st.sampled_from(["succeeded", "not_executed"]),
        confirmed=st.booleans(),
    )
    def operator_resolves(self, data: Any, outcome: str, confirmed: bool) -> None:
        key = data.draw(st.sampled_from(sorted(self.fingerprints)), label="key")
        body: dict[str, Any] = {"outcome": outcome, "reason": "checked with the owner"}
        if confirmed:
            body["confirmed_by_owner"] = True
        response = self.world.request(
            lambda: self.operator.post(f"/api/v1/effects/{key}/resolve", body)
        )
        assert response.status_code in (200, 409) or (
            response.json()["code"] == "database_unavailable"
        ), response.content

    @precondition(lambda self: len(self.quarantines) < len(SOURCES))
    @rule(source=st.sampled_from(SOURCES))
    def quarantine(self, source: str) -> None:
        if source in self.quarantines:
            return
        body = {"scope": "source", "target": source, "reason": "owner misbehaving"}
        response = self.world.request(lambda: self.operator.post("/api/v1/quarantines", body))
        assert response.status_code == 202, response.content
        self.quarantines[source] = response.json()["id"]

    @precondition(lambda self: self.quarantines)
    @rule(data=st.data())
    def release(self, data: Any) -> None:
        source = data.draw(st.sampled_from(sorted(self.quarantines)), label="source")
        self._lift(source)

    @precondition(lambda self: self.evidence)
    @rule(data=st.data())
    def correction(self, data: Any) -> None:
        evidence_id = data.draw(st.sampled_from(self.evidence), label="evidence")
        self.evidence.remove(evidence_id)
        body = {"evidence_id": evidence_id, "reason": "the ledger entry was wrong"}
        response = self.world.request(lambda: self.operator.post("/api/v1/corrections", body))
        assert response.status_code in (201, 202), response.content
        self.tainted |= {s.snapshot_id for s in self.snaps if evidence_id in s.evidence}

    @rule()
    def settle(self) -> None:
        """Time passes with a healthy owner, no quarantine and workers running: every
        accepted effect is read back, every sent one resolved; none stays recorded or sent."""
        sandbox_faults_clear(source="case-service")
        self.world.armed.clear()
        for source in list(self.quarantines):
            self._lift(source)
        for _ in range(4):
            self.world.clock.offset += timedelta(hours=1, seconds=61)
            effects_sweep()
            self.world.work(len(self.world.queued))
        assert not self.world.unsettled(), self.world.unsettled()
        for key in Effect.objects.filter(status="unknown").values_list(
            "idempotency_key", flat=True
        ):
            # Left unknown only when the owner's ledger cannot say (its dedupe record lost).
            assert not SandboxEffect.objects.filter(idempotency_key=key).exists(), key

    def _lift(self, source: str) -> None:
        quarantine_id = self.quarantines.pop(source)
        response = self.world.request(
            lambda: self.operator.post(
                f"/api/v1/quarantines/{quarantine_id}/lift", {"reason": "owner fixed"}
            )
        )
        assert response.status_code == 200, response.content

    @invariant()
    def invariants_hold(self) -> None:
        self.world.check()


def _owner_record() -> SandboxRecord:
    return SandboxRecord.objects.get(source="case-service", subject=SUBJECT, field=FIELD)


@pytest.mark.usefixtures("collectible")
def test_effect_lifecycle_model(agent: Persona, operator: Persona) -> None:
    world = World()
    EffectLifecycle.world, EffectLifecycle.agent, EffectLifecycle.operator = (
        world,
        agent,
        operator,
    )
    with world.installed():
        run_state_machine_as_test(
            EffectLifecycle,
            settings=settings(
                max_examples=int(os.environ.get("LIFECYCLE_EXAMPLES", "20")),
                stateful_step_count=25,
                deadline=None,
                suppress_health_check=list(HealthCheck),
            ),
        )
