"""The people's side of the governance model (test_governance_stateful.py): operators
correct evidence and quarantine and lift, reviewers decide escalations and promotions (never
their own) and activate contract versions, auditors replay and follow lineage. Each rule
states the answer the model expects and records what the audit trail must then hold."""

from __future__ import annotations

from collections import Counter
from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

from reconcile_app.models import Escalation
from tests.conftest import COLLECTIONS, Persona
from tests.reconcile_app.quarantine.governance_model import DIRECT, Mem, Model, request


class OperatorControls(RuleBasedStateMachine):
    model: ClassVar[Model]
    operator: ClassVar[Persona]
    auditor: ClassVar[Persona]
    reviewers: ClassVar[dict[str, Persona]]

    @precondition(lambda self: self.model.snaps)
    @rule(data=st.data(), mode=st.sampled_from(["as_recorded", "corrected"]))
    def replay(self, data: Any, mode: str) -> None:
        """An auditor replays a snapshot: as recorded, it is exactly what was issued."""
        snapshot_id = data.draw(st.sampled_from(list(self.model.snaps)), label="snapshot")
        response = self.auditor.post(f"/api/v1/snapshots/{snapshot_id}/replay", {"mode": mode})
        assert response.status_code == 200, response.content
        replayed = response.json()
        if mode == "as_recorded":
            assert replayed["exact"], replayed
            assert replayed["replayed_hash"] == self.model.snaps[snapshot_id].row[0]

    # People.

    @rule(data=st.data(), replace=st.booleans())
    def correction(self, data: Any, replace: bool) -> None:
        evidence_id = data.draw(st.sampled_from(self.model.evidence), label="evidence")
        body: dict[str, Any] = {"evidence_id": evidence_id, "reason": "the entry was wrong"}
        if replace:
            body["replacement"] = {"value": "collect"}
        before = {
            s
            for s in self.model.snaps
            if f"snapshot:{s}" in self.model.downstream(f"evidence:{evidence_id}")
        }
        response = request(lambda: self.operator.post("/api/v1/corrections", body))
        model = self.model
        if evidence_id in model.corrected:
            assert response.json()["code"] == "already_corrected", response.content
            return
        if evidence_id in model.revocations and not replace:
            assert response.json()["code"] == "replacement_required", response.content
            return
        assert response.status_code in (201, 202), response.content
        correction = response.json()
        entry = correction["correction"]["evidence_id"]
        model.corrected.add(evidence_id)
        model.withdrawn.add(evidence_id)
        model.tainted |= before
        model.evidence.append(entry)
        if not replace:
            model.revocations.add(entry)
        model.audited("correction.create", self.operator.name)
        self._lineage_check(f"evidence:{evidence_id}")

    def _lineage_check(self, root: str) -> None:
        """Everything the model knows derives from `root` is among its descendants."""
        response = self.operator.get(f"/api/v1/lineage/{root}/descendants", page_size=500)
        assert response.status_code == 200, response.content
        found = {node["node"] for node in response.json()["nodes"]}
        missing = self.model.downstream(root) - found
        assert not missing, f"{root}'s lineage leaves out {sorted(missing)}"

    @precondition(lambda self: self.model.memories)
    @rule(data=st.data())
    def memory_lineage(self, data: Any) -> None:
        memory_id = data.draw(st.sampled_from(list(self.model.memories)), label="memory")
        self._lineage_check(f"memory:{memory_id}")

    @rule(memory_class=st.sampled_from([*DIRECT, "runbooks"]))
    def queues_agree(self, memory_class: str) -> None:
        """What the operator's lists say is what the rows and the model say."""
        model = self.model
        shown = self.operator.get(f"/api/v1/memory-classes/{memory_class}").json()
        mine = Counter(m.status for m in model.memories.values() if m.memory_class == memory_class)
        assert {k: v for k, v in shown["counts"].items() if v} == dict(mine), (shown, mine)
        assert shown["total"] == sum(mine.values()), shown
        assert shown["quarantined"] == (memory_class in model.quarantined("memory_class"))
        open_rows = Escalation.objects.filter(status="open").count()
        listed = self.operator.get("/api/v1/escalations", status="open").json()["count"]
        suggested = sum(m.status == "suggested" for m in model.memories.values())
        open_promotions = Escalation.objects.filter(status="open", code="promotion").count()
        assert listed == open_rows and open_promotions == suggested, (listed, open_rows)
        applied = self.operator.get("/api/v1/quarantines", status="applied").json()["count"]
        assert applied == len(model.quarantines), applied
        for mem in list(model.memories.values())[-3:]:
            record = self.operator.get(f"/api/v1/memories/{mem.memory_id}").json()
            named = {item["evidence_id"] for item in record["grounds_corrected"]}
            upstream = {
                e
                for e in model.corrected
                if f"memory:{mem.memory_id}" in model.downstream(f"evidence:{e}")
            }
            assert upstream <= named, (mem, upstream, named)

    @rule(
        scope=st.sampled_from(["source", "memory_class", "memory"]),
        data=st.data(),
    )
    def quarantine(self, scope: str, data: Any) -> None:
        targets = {
            "source": ["case-service", "complaints-service"],
            "memory_class": ["episodic", "case-notes", "runbooks"],
            "memory": list(self.model.memories),
        }[scope]
        if not targets:
            return
        target = data.draw(st.sampled_from(targets), label="target")
        body = {"scope": scope, "target": target, "reason": "looks poisoned"}
        response = request(lambda: self.operator.post("/api/v1/quarantines", body))
        if (scope, target) in self.model.quarantines:
            assert response.json()["code"] == "already_quarantined", response.content
            return
        assert response.status_code == 202, response.content
        quarantine_id = response.json()["id"]
        self.model.quarantines[(scope, target)] = quarantine_id
        self.model.audited("quarantine.create", self.operator.name)
        shown = self.operator.get(f"/api/v1/quarantines/{quarantine_id}").json()
        assert shown["status"] == "applied", shown

    @precondition(lambda self: self.model.quarantines)
    @rule(data=st.data())
    def lift(self, data: Any) -> None:
        held = data.draw(st.sampled_from(sorted(self.model.quarantines)), label="quarantine")
        quarantine_id = self.model.quarantines.pop(held)
        path = f"/api/v1/quarantines/{quarantine_id}/lift"
        response = request(lambda: self.operator.post(path, {"reason": "checked, clean"}))
        assert response.status_code == 200, response.content
        self.model.audited("quarantine.lift", self.operator.name)
        again = request(lambda: self.operator.post(path, {"reason": "twice"}))
        assert again.json()["code"] == "not_active", again.content

    @rule(who=st.sampled_from(["rhys", "rita", "dual"]), approve=st.booleans(), data=st.data())
    def decide(self, who: str, approve: bool, data: Any) -> None:
        """A reviewer decides an open escalation: a decision's or a promotion's."""
        # In the order they were opened: ids are random, and hypothesis replays by position.
        open_ids = list(
            Escalation.objects.filter(status="open")
            .order_by("id")
            .values_list("escalation_id", flat=True)
        )
        if not open_ids:
            return
        escalation_id = data.draw(st.sampled_from(open_ids), label="escalation")
        escalation = Escalation.objects.get(escalation_id=escalation_id)
        reviewer = self.reviewers[who]
        verb = "approve" if approve else "reject"
        response = request(
            lambda: reviewer.post(
                f"/api/v1/escalations/{escalation_id}/{verb}", {"rationale": "looked at it"}
            )
        )
        mem = next(
            (m for m in self.model.memories.values() if m.escalation_id == escalation_id), None
        )
        expected = self._decision_refusal(mem, reviewer, approve)
        if expected is not None:
            assert response.json()["code"] == expected, (expected, response.content)
            if expected == "self_approval_forbidden":
                self.model.audited(f"escalation.{verb}.refused", reviewer.name)
            return
        assert response.status_code == 200, response.content
        self.model.audited(f"escalation.{verb}", reviewer.name)
        if mem is not None:
            mem.status = "active" if approve else "rejected"
            self.model.audited(f"memory.{'promote' if approve else 'reject'}", reviewer.name)
        assert escalation.code != "promotion" or mem is not None, escalation_id

    def _decision_refusal(self, mem: Mem | None, reviewer: Persona, approve: bool) -> str | None:
        if mem is not None and mem.writer == reviewer.name:
            return "self_approval_forbidden"  # the writer of a suggestion never decides it
        if mem is None or not approve:
            return None
        if mem.memory_class in self.model.quarantined("memory_class"):
            return "memory_class_quarantined"
        if mem.memory_id in self.model.quarantined("memory"):
            return "memory_quarantined"
        grounds = {f"evidence:{e}" for e in self.model.corrected}
        if any(f"memory:{mem.memory_id}" in self.model.downstream(g) for g in grounds):
            return "memory_tainted"
        return None

    @rule(version=st.sampled_from(["7.3", "7.4"]))
    def activate(self, version: str) -> None:
        """A reviewer activates a contract version: the other one, or (a rollback) back."""
        reviewer = self.reviewers["rhys"]
        path = f"/api/v1/contracts/{COLLECTIONS}/{version}/activate"
        response = request(lambda: reviewer.post(path, {"rationale": "reviewed the diff"}))
        if version == self.model.active_contract:
            assert response.status_code == 409, response.content
            return
        assert response.status_code == 202, response.content
        status = reviewer.get(f"/api/v1/contracts/{COLLECTIONS}/{version}").json()["status"]
        assert status == "active", response.content
        rollback = version in self.model.retired  # it was active once: coming back to it
        for action in ("contract.activation_requested", "contract.retire"):
            self.model.audited(action, reviewer.name)
        self.model.audited("contract.rollback" if rollback else "contract.activate", reviewer.name)
        self.model.retired.add(self.model.active_contract)
        self.model.active_contract = version
        self.model.went_live = self.model.clock.now()
