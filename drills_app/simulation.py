"""A live demo: a few agents working the demo estate, while the world changes under them.

Three demo agents (collections, warehouse, card dispatch), each with the capabilities of its
demo contract only, act on subjects of their own (`sim-<tag>-…`, created as the simulation
goes) through the real services: they reconcile with what they remember, commit what the
decision permits with If-Match and an Idempotency-Key (or, told `escalate`, wait for a
reviewer and commit once the escalation is approved), and learn from what the snapshot
read (superseding their memories, with provenance). Meanwhile the world moves: hardship is
approved, pallets move, addresses change, complaints open, a source contradicts an owner.
Now and then the sandbox misbehaves (lag, an outage, a timeout after commit, a dropped
postcondition, a change between decision and commit). Readbacks and resolutions are left
to the Celery worker, as in production. Every fault is counted (fires once) and injected
just before the operation it is meant for.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from random import Random
from typing import Any

from django.utils import timezone

from config.logs import request_id_var
from drills_app.desks import DESKS, Desk
from reconcile_app.choices import DecisionResult, EscalationStatus
from reconcile_app.errors import DomainError
from reconcile_app.models import Contract, DecisionSnapshot, Escalation, Principal
from reconcile_app.reconciliation.types import Claim
from reconcile_app.selectors.approvals import snapshot_approval
from reconcile_app.services.effects import effect_commit
from reconcile_app.services.evidence import evidence_append
from reconcile_app.services.memory import memory_admit
from reconcile_app.services.principals import principal_create
from reconcile_app.services.reconcile import ReconcileRequest, snapshot_issue
from sandbox_app.services import sandbox_fault_add, sandbox_record_write

MEMORY_CLASS = "episodic"
POOL_SIZE = 5
FAULTS = ("lag", "unavailable", "timeout_after_commit", "drop_postcondition", "race", "outage")


class SimulationError(Exception):
    pass


@dataclass
class Belief:
    """What an agent remembers about one subject's field, and the memory record behind it."""

    value: Any
    memory_id: str
    written_at: Any
    derived_from: tuple[str, ...]


@dataclass
class Simulation:
    rng: Random
    fault_rate: float = 0.2
    tag: str = field(default_factory=lambda: secrets.token_hex(2))
    agents: dict[str, Principal] = field(default_factory=dict)
    pools: dict[str, list[str]] = field(default_factory=dict)
    beliefs: dict[str, Belief] = field(default_factory=dict)
    # Escalated plans awaiting a reviewer: escalation id → (desk, latest snapshot id, action,
    # value). Retries join one escalation, so the latest snapshot replaces the earlier.
    waiting: dict[str, tuple[Desk, str, str, Any]] = field(default_factory=dict)
    counter: int = 0

    def ensure_setup(self) -> None:
        """The demo contracts must be loaded; the demo agents are created once."""
        missing = sorted(
            {desk.decision_class for desk in DESKS}
            - set(Contract.objects.values_list("decision_class", flat=True))
        )
        if missing:
            raise SimulationError(
                f"the demo contracts {', '.join(missing)} are not loaded: run "
                "`python manage.py load_demo` first"
            )
        for desk in DESKS:
            agent = Principal.objects.filter(name=desk.agent).first()
            if agent is None:
                actions = Contract.objects.filter(decision_class=desk.decision_class)
                names = sorted(
                    set(actions.values_list("actions__name", flat=True)) - {None}  # type: ignore[arg-type]
                )
                agent, _ = principal_create(
                    name=desk.agent,
                    capabilities=[f"{desk.decision_class}:{name}" for name in names],
                )
            self.agents[desk.agent] = agent

    # --- the world -------------------------------------------------------------------------

    def _observe(self, desk: Desk, subject: str, value: Any, source: str, note: str) -> str:
        return evidence_append(
            kind="observation",
            subject=subject,
            field=desk.field,
            value=value,
            source=source,
            observed_at=timezone.now(),
            note=note,
        ).evidence_id

    def _new_subject(self, desk: Desk) -> str:
        self.counter += 1
        subject = f"sim-{self.tag}-{desk.prefix}-{self.counter}"
        value = desk.values[0] if desk.prefix == "acct" else self.rng.choice(desk.values)
        sandbox_record_write(source=desk.source, subject=subject, field=desk.field, value=value)
        for source, name, extra in desk.extras:
            sandbox_record_write(source=source, subject=subject, field=name, value=extra)
        evidence_id = self._observe(desk, subject, value, desk.ledger, "opened by the simulation")
        memory = memory_admit(
            agent=self.agents[desk.agent],
            memory_class=MEMORY_CLASS,
            subject=subject,
            purpose=desk.purpose,
            field=desk.field,
            value=value,
            derived_from=[evidence_id],
            note=f"{desk.field} is {value}",
        )
        self.beliefs[subject] = Belief(value, memory.memory_id, memory.written_at, (evidence_id,))
        pool = self.pools.setdefault(desk.agent, [])
        pool.append(subject)
        del pool[:-POOL_SIZE]
        return subject

    def _subject(self, desk: Desk) -> str:
        pool = self.pools.get(desk.agent) or []
        return self.rng.choice(pool) if pool else self._new_subject(desk)

    def world_change(self, desk: Desk, subject: str) -> str:
        """The owner's record changes (and the ledger says so); the agent does not know."""
        value = self.rng.choice([v for v in desk.values if v != self.beliefs[subject].value])
        sandbox_record_write(source=desk.source, subject=subject, field=desk.field, value=value)
        self._observe(desk, subject, value, desk.ledger, f"{desk.field} changed to {value}")
        return f"world: {subject} {desk.field} → {value!r}"

    def contradiction(self, desk: Desk, subject: str) -> str:
        """Another source reports a value the owner does not hold."""
        value = self.rng.choice(desk.values)
        self._observe(desk, subject, value, desk.witness, f"{desk.witness} reports {value}")
        return f"world: {desk.witness} says {subject} {desk.field} is {value!r}"

    def complaint(self, desk: Desk, subject: str) -> str:
        value = self.rng.choice(("open", "none"))
        sandbox_record_write(
            source="complaints-service", subject=subject, field="complaint_status", value=value
        )
        return f"world: {subject} complaint_status → {value!r}"

    # --- the agents --------------------------------------------------------------------------

    def _learn(self, desk: Desk, subject: str, snapshot: Any) -> None:
        """Supersede the memory with what the snapshot read, when evidence supports it."""
        read = snapshot.content["fields"].get(desk.field, {})
        belief = self.beliefs[subject]
        if read.get("status") != "ok" or not read.get("evidence") or read["value"] == belief.value:
            return
        try:
            memory = memory_admit(
                agent=self.agents[desk.agent],
                memory_class=MEMORY_CLASS,
                subject=subject,
                purpose=desk.purpose,
                field=desk.field,
                value=read["value"],
                derived_from=read["evidence"][-1:],
                supersedes=belief.memory_id,
                note=f"learnt from {snapshot.snapshot_id}",
            )
        except DomainError:
            return  # e.g. the class is quarantined: the agent keeps its old belief
        self.beliefs[subject] = Belief(
            read["value"], memory.memory_id, memory.written_at, tuple(read["evidence"][-1:])
        )

    def act(self, desk: Desk, subject: str, fault: str | None) -> str:
        agent = self.agents[desk.agent]
        belief = self.beliefs[subject]
        action, value = desk.action_for(belief.value)
        if fault in ("lag", "unavailable"):
            seconds = 3600 if fault == "lag" else 0  # an hour behind: stale for every contract
            sandbox_fault_add(source=desk.source, kind=fault, count=1, seconds=seconds)
        claim = Claim(
            subject=subject,
            field=desk.field,
            value=belief.value,
            written_at=belief.written_at,
            memory_class=MEMORY_CLASS,
            purpose=desk.purpose,
            derived_from=belief.derived_from,
            note="what the agent remembers",
            memory_id=belief.memory_id,
        )
        snapshot = snapshot_issue(
            principal=agent,
            request=ReconcileRequest(
                subject=subject,
                purpose=desk.purpose,
                decision_class=desk.decision_class,
                proposed_action=action,
                # The snapshot binds the value the agent means to write: what it commits is
                # exactly what policy saw (a dispatch to a remembered, outdated address is
                # denied rather than written).
                proposed_value=value,
                claims=[claim],
            ),
        )
        decision = snapshot.content["decision"]
        verdict = snapshot.content["claims"][0]["verdict"] if snapshot.content["claims"] else "-"
        line = (
            f"{desk.agent} {subject} {action}: {decision['result']} "
            f"({', '.join(r['code'] for r in decision['reasons'])}; memory {verdict})"
        )
        self._learn(desk, subject, snapshot)
        escalation = snapshot_approval(snapshot)
        if decision["result"] == DecisionResult.ESCALATE and escalation is not None:
            self.waiting[escalation.escalation_id] = (desk, snapshot.snapshot_id, action, value)
            line += f" → waits on {escalation.escalation_id}"
        if (
            decision["result"] != DecisionResult.ALLOW
            or action not in decision["permitted_actions"]
        ):
            # A fault meant for the commit is not injected when there is nothing to commit.
            return line + (f" [fault {fault}]" if fault in ("lag", "unavailable") else "")
        # Commit against the version read; a race is someone else writing in between.
        read = snapshot.content["fields"][desk.field]
        if fault == "race":
            line += " | " + self.world_change(desk, subject)
        elif fault in ("timeout_after_commit", "drop_postcondition", "outage"):
            kind = "timeout_after_commit" if fault == "outage" else fault
            sandbox_fault_add(source=desk.source, kind=kind, count=1)
        try:
            effect = effect_commit(
                principal=agent,
                idempotency_key=f"sim-{self.tag}-{secrets.token_hex(6)}",
                if_match=f'"{read["version"]}"',
                snapshot_id=snapshot.snapshot_id,
                action=action,
                resulting_value=value,
            ).effect
        except DomainError as exc:
            return f"{line} → commit {exc.status} {exc.code}"
        if fault == "outage" and effect.status == "unknown":
            # The owner goes away right after: the resolution has to wait for it.
            sandbox_fault_add(source=desk.source, kind="unavailable", count=3)
        # The agent learns the new value from the next snapshot (the receipt is evidence).
        outcome = effect.outcome.get("code", "") if effect.status == "rejected" else ""
        return f"{line} → effect {effect.status}{f' {outcome}' if outcome else ''}" + (
            f" [fault {fault}]" if fault else ""
        )

    def follow_up(self) -> str | None:
        """A reviewer decided an escalation an agent waits on: approved, the agent commits the
        escalated snapshot (the approval authorises it); rejected, it drops the plan."""
        decided = (
            Escalation.objects.filter(escalation_id__in=list(self.waiting))
            .exclude(status=EscalationStatus.OPEN)
            .values_list("escalation_id", "status")
            .first()
        )
        if decided is None:
            return None
        escalation_id, status = decided
        desk, snapshot_id, action, value = self.waiting.pop(escalation_id)
        line = f"{desk.agent} {action} on {snapshot_id[:14]}…: {escalation_id} {status}"
        if status != EscalationStatus.APPROVED:
            return line + ", plan dropped"
        read = DecisionSnapshot.objects.get(snapshot_id=snapshot_id).content["fields"][desk.field]
        try:
            effect = effect_commit(
                principal=self.agents[desk.agent],
                idempotency_key=f"sim-{self.tag}-{secrets.token_hex(6)}",
                if_match=f'"{read["version"]}"',
                snapshot_id=snapshot_id,
                action=action,
                resulting_value=value,
            ).effect
        except DomainError as exc:
            return f"{line} → commit {exc.status} {exc.code}"
        return f"{line} by {effect.approved_by} → effect {effect.status}"

    # --- one step ------------------------------------------------------------------------------

    def step(self) -> str:
        followed = self.follow_up() if self.waiting else None
        if followed is not None:
            return followed
        desk = self.rng.choice(DESKS)
        roll = self.rng.random()
        if roll < 0.06 or not self.pools.get(desk.agent):
            subject = self._new_subject(desk)
            return f"world: new subject {subject} ({desk.field} = {self.beliefs[subject].value!r})"
        subject = self._subject(desk)
        if roll < 0.26:
            return self.world_change(desk, subject)
        if roll < 0.32:
            return self.contradiction(desk, subject)
        if roll < 0.37 and desk.prefix == "acct":
            return self.complaint(desk, subject)
        fault = self.rng.choice(FAULTS) if self.rng.random() < self.fault_rate else None
        return self.act(desk, subject, fault)


def simulation_run(
    *,
    iterations: int,
    interval: float,
    jitter: float,
    fault_rate: float,
    seed: int | None,
    write: Callable[[str], None],
    sleep: Callable[[float], None],
    fail_fast: bool = False,
) -> int:
    """Run `iterations` steps (0: until interrupted); returns how many steps ran."""
    from django.db import close_old_connections, connection

    rng = Random(seed)  # noqa: S311 (a demo's dice, not a secret)
    simulation = Simulation(rng=rng, fault_rate=fault_rate)
    simulation.ensure_setup()
    done = 0
    while not iterations or done < iterations:
        if not connection.in_atomic_block:
            # A long-running loop must not hold a dead connection (as Django does per request).
            close_old_connections()
        # Each step its own request id, as each web request has: what it writes and the
        # readbacks it queues are found together, never under one id for the whole run
        # (manage.py gives the run one).
        request_id_var.set(uuid.uuid4().hex)
        try:
            write(simulation.step())
        except DomainError as exc:
            write(f"refused: {exc.status} {exc.code}: {exc.detail}")
        except Exception as exc:
            if fail_fast:
                raise
            write(f"error: {type(exc).__name__}: {exc}")
        done += 1
        if not iterations or done < iterations:
            sleep(max(0.0, interval + rng.uniform(-jitter, jitter)))
    return done
