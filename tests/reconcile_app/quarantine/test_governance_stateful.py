"""A stateful model of memory governance and operator controls (hypothesis
RuleBasedStateMachine) against the real API on the test database.

Its rules interleave what agents and people do around remembered beliefs: the agent writes
memories (direct and reviewed classes, derived from evidence, its snapshots and memories)
and reconciles recalling them; the owner's record changes and the case ledger attests it;
operators correct evidence, quarantine and lift a source, a memory class or one record;
reviewers approve or reject escalations and promotions (never their own); a contract version
is activated and rolled back; time passes; agents commit on snapshots issued before and
after those controls, and auditors replay them. After every step (governance_model.Model):
no snapshot changes; every effect rests on an `allow` or an approved escalation; no refused
commit became an effect; the memories' statuses are the model's, their status history ends
there, and each suggestion's question is settled with it; every operator action has one
audit row naming who, when and why; the quarantines in force are the model's. Each commit's
answer is the one the model predicts from what was withdrawn, quarantined, superseded and
approved; each reconcile decides as it would with no claims at all; each correction's lineage
reaches everything the model knows derives from the entry. Each example runs in a savepoint
rolled back at its end.

The agent's and the owner's rules are here, the people's in governance_people.py. Bounded to
stay fast (20 examples of 25 steps); GOVERNANCE_EXAMPLES=400 (and GOVERNANCE_STEPS=40) hunts
longer.
"""

from __future__ import annotations

import os
from datetime import date, timedelta
from typing import Any, ClassVar
from unittest.mock import patch

import pytest
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.db import transaction
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from reconcile_app.models import AuditEvent, Effect, Escalation, EvidenceEntry
from reconcile_app.services.contracts import contracts_load
from reconcile_app.services.evidence import evidence_append
from reconcile_app.services.memory import memories_expire
from sandbox_app.models import SandboxRecord
from sandbox_app.services import sandbox_record_write
from tests.conftest import COLLECTIONS, ESTATE, Persona, make_person
from tests.factories import write_yaml
from tests.reconcile_app.effects.conftest import SUBJECT, collectible  # noqa: F401
from tests.reconcile_app.quarantine.governance_model import (
    DIRECT,
    Mem,
    Model,
    Snap,
    node_of,
    reads_of,
    request,
    snapshot_row,
)
from tests.reconcile_app.quarantine.governance_people import OperatorControls

FIELD = "collections_status"
WRITES = {"release_collections_hold": "released", "retain_manual_review": "manual_review"}
WINDOW = timedelta(seconds=120)  # the contract's commit_window_seconds
ESTATE_CONTRACT = ESTATE / f"{COLLECTIONS}.yaml"


class Governance(OperatorControls):
    model: ClassVar[Model]
    agent: ClassVar[Persona]
    operator: ClassVar[Persona]
    auditor: ClassVar[Persona]
    reviewers: ClassVar[dict[str, Persona]]

    def __init__(self) -> None:
        super().__init__()
        # Each example is a fresh start for the rate limits too: a long hunt's people would
        # otherwise reach their requests-a-minute limit across examples.
        cache.clear()
        self.savepoint = transaction.atomic()
        self.savepoint.__enter__()
        clock = self.model.clock
        clock.offset = timedelta(0)
        type(self).model = Model(clock=clock, evidence=["ev-collect"])
        self.model.audit_floor = (
            AuditEvent.objects.order_by("-id").values_list("id", flat=True).first() or 0
        )

    def teardown(self) -> None:
        transaction.set_rollback(True)
        self.savepoint.__exit__(None, None, None)

    # The owner and the case ledger.

    @rule(value=st.sampled_from(["collect", "hold"]), attest=st.booleans())
    def owner_writes(self, value: str, attest: bool) -> None:
        sandbox_record_write(source="case-service", subject=SUBJECT, field=FIELD, value=value)
        if attest:
            entry = evidence_append(
                kind="observation",
                subject=SUBJECT,
                field=FIELD,
                value=value,
                source="case-ledger",
                observed_at=self.model.clock.now(),
            )
            self.model.evidence.append(entry.evidence_id)

    @rule(complaint=st.sampled_from(["none", "open"]))
    def complaint(self, complaint: str) -> None:
        sandbox_record_write(
            source="complaints-service", subject=SUBJECT, field="complaint_status", value=complaint
        )

    @rule(seconds=st.sampled_from([30, 121]))
    def time_passes(self, seconds: int) -> None:
        self.model.clock.offset += timedelta(seconds=seconds)

    @rule()
    def a_month_passes(self) -> None:
        """Episodes (30 days) and case notes (90) expire; reviewed memory does not."""
        self.model.clock.offset += timedelta(days=31)
        # The owner's and the ledger's words age with it: say them again, now.
        record = _owner_record()
        sandbox_record_write(
            source="case-service", subject=SUBJECT, field=FIELD, value=record.value
        )
        today = self.model.clock.now().date()
        memories_expire(today=today)
        for mem in self.model.memories.values():
            # Episodes and case notes expire after their valid_until (inclusive); reviewed
            # memory retires only by review.
            if (
                mem.memory_class in DIRECT
                and mem.status == "current"
                and date.fromisoformat(mem.valid_until) < today
            ):
                mem.status = "expired"

    # The agent's memory.

    @rule(
        memory_class=st.sampled_from(DIRECT),
        value=st.sampled_from(["collect", "hold"]),
        data=st.data(),
    )
    def remember(self, memory_class: str, value: str, data: Any) -> None:
        """A memory derived from an evidence entry, a snapshot of the agent's or a memory."""
        grounds = self.model.evidence + [f"snapshot:{s}" for s in self.model.snaps]
        # Its own memories: another principal's is not the agent's to derive from.
        grounds += [f"memory:{m.memory_id}" for m in self._own()]
        derived_from = data.draw(st.lists(st.sampled_from(grounds), min_size=1, max_size=2))
        self._write(self.agent, memory_class, value, derived_from)

    def _own(self) -> list[Mem]:
        return [m for m in self.model.memories.values() if m.writer == self.agent.name]

    @rule(writer=st.sampled_from(["agent", "dual"]), data=st.data())
    def suggest_runbook(self, writer: str, data: Any) -> None:
        """A procedure, admitted only by review: `dual` is an operator who also reviews."""
        derived_from = [data.draw(st.sampled_from(self.model.evidence), label="grounds")]
        persona = self.agent if writer == "agent" else self.reviewers["dual"]
        self._write(persona, "runbooks", "read again after a 412", derived_from)

    def _write(self, persona: Persona, memory_class: str, value: str, grounds: list[str]) -> None:
        body = {
            "memory_class": memory_class,
            "subject": SUBJECT,
            "purpose": "collections",
            "field": FIELD,
            "value": value,
            "derived_from": grounds,
            "note": "seen on the account",
        }
        response = request(lambda: persona.post("/api/v1/memories", body))
        if memory_class in self.model.quarantined("memory_class"):
            assert response.status_code == 423, response.content
            assert response.json()["code"] == "memory_class_quarantined"
            return
        unadmitted = [
            ref
            for ref in grounds
            if ref.startswith("memory:")
            and self.model.memories[ref.removeprefix("memory:")].status in ("suggested", "rejected")
        ]
        if unadmitted and memory_class != "runbooks":
            # No reviewer admitted them: a memory in force may not carry them forward.
            assert response.json()["code"] == "derivation_not_admitted", response.content
            return
        assert response.status_code == 201, response.content
        made = response.json()
        review = memory_class == "runbooks"
        assert made["status"] == ("suggested" if review else "current"), made
        assert bool(made["promotion_escalation_id"]) == review, made
        self.model.memories[made["memory_id"]] = Mem(
            memory_id=made["memory_id"],
            memory_class=memory_class,
            status=made["status"],
            writer=persona.name,
            derived_from=grounds,
            escalation_id=made["promotion_escalation_id"],
            valid_until=made["valid_until"] or "",
        )
        node = f"memory:{made['memory_id']}"
        self.model.derive(node, *(node_of(ref) for ref in grounds))

    # Decisions and commits.

    @rule(action=st.sampled_from(sorted(WRITES)), data=st.data())
    def reconcile(self, action: str, data: Any) -> None:
        """Reconcile recalling some of its memories, and a free claim; then the same question
        with no claims, which must be decided the same way: a belief never authorises."""
        recalled = data.draw(
            # Its own: another principal's record is not the agent's to recall.
            st.lists(st.sampled_from([m.memory_id for m in self._own()] or ["-"]), max_size=3),
            label="recalled",
        )
        recalled = [m for m in dict.fromkeys(recalled) if m in self.model.memories]
        claims: list[dict[str, Any]] = [{"memory_id": m} for m in recalled]
        free = data.draw(st.sampled_from([None, "collect", "hold"]), label="free claim")
        if free is not None:
            claims.append({"subject": SUBJECT, "field": FIELD, "value": free})
        with_claims = self._reconcile(action, claims)
        bare = self._reconcile(action, [])
        keep = ("result", "permitted_actions", "reasons")
        assert {k: with_claims["decision"][k] for k in keep} == {
            k: bare["decision"][k] for k in keep
        }, (with_claims["decision"], bare["decision"])
        assert with_claims["completeness"] == bare["completeness"]
        held_classes = self.model.quarantined("memory_class")
        held_records = self.model.quarantined("memory")
        for claim, memory_id in zip(with_claims["claims"], recalled, strict=False):
            assert claim["memory_id"] == memory_id, claim
            mem = self.model.memories[memory_id]
            held = mem.memory_class in held_classes or memory_id in held_records
            assert (claim["verdict"] == "quarantined") == held, (claim, mem, held_records)
            if not held:
                self.model.derive(f"snapshot:{with_claims['snapshot_id']}", f"memory:{memory_id}")

    def _reconcile(self, action: str, claims: list[dict[str, Any]]) -> dict[str, Any]:
        body = {
            "subject": SUBJECT,
            "purpose": "collections",
            "decision_class": COLLECTIONS,
            "proposed_action": action,
            "claims": claims,
        }
        response = request(lambda: self.agent.post("/api/v1/reconcile", body))
        assert response.status_code == 201, response.content
        snap = response.json()
        fields = snap["fields"]
        snapshot_id = snap["snapshot_id"]
        evidence = {item["evidence_id"] for item in snap["evidence_manifest"]}
        self.model.snaps[snapshot_id] = Snap(
            snapshot_id=snapshot_id,
            action=action,
            result=snap["decision"]["result"],
            permitted=snap["decision"]["permitted_actions"],
            version=(fields.get(FIELD) or {}).get("version") or 0,
            contract=snap["contract"]["version"],
            issued_at=self.model.clock.now(),
            evidence=evidence,
            read_ok={read["source"] for read in fields.values() if read["status"] == "ok"},
            escalation_id=snap["escalation_id"],
            row=snapshot_row(snapshot_id),
        )
        self.model.derive(f"snapshot:{snapshot_id}", *(f"evidence:{e}" for e in evidence))
        # A receipt or readback it used derives from the effect's snapshot, and so on up.
        for entry, grounds in EvidenceEntry.objects.filter(
            evidence_id__in=evidence - set(self.model.evidence)
        ).values_list("evidence_id", "derived_from"):
            self.model.derive(f"evidence:{entry}", *(node_of(ref) for ref in grounds))
        # Withdrawn evidence supports nothing new.
        assert not evidence & self.model.withdrawn, (evidence, self.model.withdrawn)
        return snap

    @precondition(lambda self: self.model.snaps)
    @rule(data=st.data())
    def commit(self, data: Any) -> None:
        """A commit, under a fresh key, on any snapshot issued so far."""
        self._commit(data.draw(st.sampled_from(list(self.model.snaps)), label="snapshot"))

    @rule(action=st.sampled_from(sorted(WRITES)), data=st.data())
    def reconcile_and_commit(self, action: str, data: Any) -> None:
        """The agent's usual step: decide recalling its memories, and act at once."""
        self.reconcile(action, data)
        self._commit(list(self.model.snaps)[-2])  # the snapshot that recalled them

    def _commit(self, snapshot_id: str) -> None:
        snap = self.model.snaps[snapshot_id]
        self.model.keys += 1
        key = f"g{self.model.keys}"
        expected = self._refusals(snap)
        body = {
            "snapshot_id": snapshot_id,
            "action": snap.action,
            "resulting_value": WRITES[snap.action],
        }
        response = request(
            lambda: self.agent.post(
                "/api/v1/effects",
                body,
                HTTP_IDEMPOTENCY_KEY=key,
                HTTP_IF_MATCH=f'"{snap.version}"',
            )
        )
        if response.status_code in (200, 201, 202):
            assert not expected, (expected, response.json())
            self.model.committed[key] = snapshot_id
            self.model.derive(f"effect:{key}", f"snapshot:{snapshot_id}")
            return
        code = response.json()["code"]
        assert code in expected, (code, expected, response.content)
        effect = Effect.objects.filter(idempotency_key=key).values_list("status", flat=True)
        if code == "version_changed" and effect:
            # Sent, and the owner refused it at its version: a rejected effect, on the record.
            assert list(effect) == ["rejected"], list(effect)
            self.model.committed[key] = snapshot_id
            self.model.derive(f"effect:{key}", f"snapshot:{snapshot_id}")
            return
        self.model.refused[key] = code

    def _refusals(self, snap: Snap) -> set[str]:
        """Every refusal a commit on `snap` now deserves; none: it must go through."""
        model = self.model
        refusals: set[str] = set()
        window_from = snap.issued_at
        if snap.result == "escalate":
            escalation = Escalation.objects.get(escalation_id=snap.escalation_id)
            if escalation.status == "open":
                refusals.add("escalation_pending")
            elif escalation.status == "rejected":
                refusals.add("escalation_rejected")
            else:
                asked = escalation.snapshot
                assert escalation.decided_at is not None and asked is not None
                window_from = escalation.decided_at
                if asked.snapshot_id != snap.snapshot_id and reads_of(asked.content) != reads_of(
                    snap.row[1]
                ):
                    refusals.add("approved_state_moved")  # a retry that joined, elsewhere
        elif snap.result != "allow" or snap.action not in snap.permitted:
            refusals.add("decision_not_allowed")
        if model.clock.now() - window_from > WINDOW:
            refusals.add("snapshot_expired")
        if snap.contract != model.active_contract or (
            model.went_live is not None and snap.issued_at < model.went_live
        ):
            refusals.add("contract_superseded")
        if snap.evidence & model.withdrawn or snap.snapshot_id in model.tainted:
            refusals.add("snapshot_tainted")
        if snap.read_ok & model.quarantined("source"):
            refusals.add("source_quarantined")
        if _owner_record().version != snap.version:
            refusals.add("version_changed")
        return refusals

    @invariant()
    def invariants_hold(self) -> None:
        self.model.check()


def _owner_record() -> SandboxRecord:
    return SandboxRecord.objects.get(source="case-service", subject=SUBJECT, field=FIELD)


SECOND = ESTATE_CONTRACT.read_text().replace('version: "7.3"', 'version: "7.4"')


@pytest.mark.usefixtures("collectible", "eager_tasks")
def test_governance_model(agent, operator, reviewer, auditor, tmp_path) -> None:
    contracts_load(paths=[str(write_yaml(tmp_path, "next.yaml", SECOND))], activate=False)
    Governance.agent, Governance.operator, Governance.auditor = agent, operator, auditor
    dual = make_person("dora-dual", "operator")
    dual.user.groups.add(Group.objects.get_or_create(name="reviewer")[0])
    Governance.reviewers = {
        "rhys": reviewer,
        "rita": make_person("rita-reviewer", "reviewer"),
        "dual": dual,
    }
    Governance.model = Model()
    with patch("django.utils.timezone.now", Governance.model.clock.now):
        run_state_machine_as_test(
            Governance,
            settings=settings(
                max_examples=int(os.environ.get("GOVERNANCE_EXAMPLES", "20")),
                stateful_step_count=int(os.environ.get("GOVERNANCE_STEPS", "25")),
                deadline=None,
                suppress_health_check=list(HealthCheck),
            ),
        )
