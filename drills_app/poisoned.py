"""The poisoned-memory scenario: recall is lineage, and a quarantine stops a record feeding
anything new (docs/api.md "Reconcile", "Quarantine", "Lineage").

The drill agent writes a memory record, recalls it in several reconciles (some of which
commit effects), and then an operator's quarantine of that one record is applied. From the
owner's side and the lineage's, the trial checks that
- the record's blast radius lists every snapshot, decision and effect it fed;
- no later decision cites it: later claims naming it get the verdict `quarantined`, and no
  lineage edge joins it to a later snapshot, however the decision went (a later snapshot
  may still descend from it through an effect it fed before: that effect's receipt is
  evidence; the report counts those, for the responder to review);
- nothing else changed: later decisions still rest on the owner's reads and may commit;
- every snapshot it took part in replays exactly as recorded.
The quarantine is lifted at the end (with that reason), so drills leave no record held.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from drills_app.world import CASE_SOURCE, COMPLAINTS_SOURCE, DECISION_CLASS, FIELD, PURPOSE
from reconcile_app.choices import DecisionResult, Verdict
from reconcile_app.errors import Conflict, DomainError
from reconcile_app.models import DecisionSnapshot, MemoryRecord, Principal
from reconcile_app.selectors.lineage import memory_citations, memory_fed
from reconcile_app.services.effects import OwnerUnavailable, effect_commit, effect_readback
from reconcile_app.services.evidence import evidence_append
from reconcile_app.services.memory import memory_admit
from reconcile_app.services.quarantine import quarantine_apply, quarantine_create, quarantine_lift
from reconcile_app.services.recall import ClaimDraft
from reconcile_app.services.reconcile import ReconcileRequest, snapshot_issue
from reconcile_app.services.replay import snapshot_replay
from sandbox_app.services import sandbox_record_write

NAME = "poisoned_memory"
TITLE = "a poisoned memory: recalled by several decisions, then quarantined"
MEMORY_CLASS = "drill-recollections"
ACTION = "retain_manual_review"
VALUE = "manual_review"
# Which recalls commit an effect, before and after the quarantine (by position).
COMMITS_BEFORE = (True, False, True)
COMMITS_AFTER = (True, False)
INITIAL_VERSION = 42
MISSED = "blast radius misses"


@dataclass
class PoisonedTrial:
    """One trial: what the record fed, what its blast radius listed, what came after."""

    subject: str
    memory_id: str = ""
    quarantine_id: str = ""
    fed_snapshots: list[str] = field(default_factory=list)
    fed_decisions: list[str] = field(default_factory=list)
    fed_effects: list[str] = field(default_factory=list)
    listed: dict[str, list[str]] = field(default_factory=dict)
    later_snapshots: list[str] = field(default_factory=list)
    later_verdicts: list[str] = field(default_factory=list)
    later_decisions: list[str] = field(default_factory=list)
    later_effects: list[str] = field(default_factory=list)
    # The snapshots its lineage says used it directly, before and after the later decisions.
    citations_before: list[str] = field(default_factory=list)
    citations_after: list[str] = field(default_factory=list)
    # Later snapshots downstream of it only through what it fed before (an effect's receipt
    # now supports the state): reported, since a responder reviews them, but not a citation.
    later_downstream: list[str] = field(default_factory=list)
    replays: int = 0
    replays_exact: int = 0
    steps: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def check(self) -> None:
        """What must hold, each failure said in words."""
        listed = {kind: set(refs) for kind, refs in self.listed.items()}
        for kind, fed in (
            ("snapshot", self.fed_snapshots),
            ("decision", self.fed_decisions),
            ("effect", self.fed_effects),
        ):
            missed = sorted(set(fed) - listed.get(kind, set()))
            if missed:
                self.failures.append(f"{MISSED} {kind}s {', '.join(missed)}")
        cited = [verdict for verdict in self.later_verdicts if verdict != Verdict.QUARANTINED.value]
        if cited:
            self.failures.append(f"a later claim citing it was {', '.join(cited)}")
        if sorted(self.citations_before) != sorted(self.fed_snapshots):
            self.failures.append("its lineage does not name exactly the snapshots that cited it")
        cited_after = sorted(set(self.citations_after) - set(self.citations_before))
        if cited_after:
            self.failures.append(f"later snapshots used it: {', '.join(cited_after)}")
        if self.replays_exact != self.replays:
            self.failures.append(f"{self.replays - self.replays_exact} replays were not exact")
        if not self.later_effects:
            self.failures.append("no later effect was committed: the quarantine held more back")


def _world(subject: str, now: datetime) -> str:
    """The owner's record (collectible), its evidence, and a quiet complaints service."""
    sandbox_record_write(
        source=CASE_SOURCE,
        subject=subject,
        field=FIELD,
        value="collect",
        version=INITIAL_VERSION,
        valid_from=now - timedelta(minutes=20),
    )
    sandbox_record_write(
        source=COMPLAINTS_SOURCE,
        subject=subject,
        field="complaint_status",
        value="none",
        valid_from=now - timedelta(days=30),
    )
    entry = evidence_append(
        kind="observation",
        subject=subject,
        field=FIELD,
        value="collect",
        source="case-ledger",
        observed_at=now - timedelta(minutes=20),
        note=f"drill {NAME}",
    )
    return entry.evidence_id


def _recall(principal: Principal, trial: PoisonedTrial, commits: bool) -> DecisionSnapshot:
    """Reconcile citing the record; commit the action (and read it back) when told to and
    the decision allows it. Returns the snapshot."""
    snapshot = snapshot_issue(
        principal=principal,
        request=ReconcileRequest(
            subject=trial.subject,
            purpose=PURPOSE,
            decision_class=DECISION_CLASS,
            proposed_action=ACTION,
            claims=[ClaimDraft(memory_id=trial.memory_id, note=f"drill {NAME}: recalled")],
        ),
    )
    content = snapshot.content
    verdict = content["claims"][0]["verdict"]
    result = content["decision"]["result"]
    trial.steps.append(f"recall → {result}, claim {verdict}")
    if not commits or result != DecisionResult.ALLOW:
        return snapshot
    key = f"{trial.subject}-k{len(trial.fed_effects) + len(trial.later_effects) + 1}"
    try:
        effect = effect_commit(
            principal=principal,
            idempotency_key=key,
            if_match=f'"{content["fields"][FIELD]["version"]}"',
            snapshot_id=snapshot.snapshot_id,
            action=ACTION,
            resulting_value=VALUE,
        ).effect
    except DomainError as exc:
        trial.steps.append(f"commit → {exc.status} {exc.code}")
        return snapshot
    # Unavailable now: the worker reads it back later, and the effect stands either way.
    with suppress(OwnerUnavailable):
        effect = effect_readback(effect_id=effect.pk)
    trial.steps.append(f"commit → {effect.status}")
    (trial.later_effects if trial.quarantine_id else trial.fed_effects).append(key)
    return snapshot


def _replay(trial: PoisonedTrial, snapshot_ids: list[str]) -> None:
    for snapshot in DecisionSnapshot.objects.filter(snapshot_id__in=snapshot_ids).select_related(
        "contract"
    ):
        trial.replays += 1
        trial.replays_exact += snapshot_replay(snapshot=snapshot, mode="as_recorded").exact


def poisoned_memory_trial(*, principal: Principal, subject: str, now: datetime) -> PoisonedTrial:
    trial = PoisonedTrial(subject=subject)
    support = _world(subject, now)
    record: MemoryRecord = memory_admit(
        agent=principal,
        memory_class=MEMORY_CLASS,
        subject=subject,
        purpose=PURPOSE,
        field=FIELD,
        value="collect",
        derived_from=[support],
        note="drill: the customer asked for collections to resume (planted, not true)",
        written_at=now - timedelta(minutes=10),
    )
    trial.memory_id = record.memory_id
    for commits in COMMITS_BEFORE:
        snapshot = _recall(principal, trial, commits)
        trial.fed_snapshots.append(snapshot.snapshot_id)
        trial.fed_decisions.append(snapshot.decision_receipt.decision_id)
    quarantine = quarantine_create(
        scope="memory",
        target=record.memory_id,
        reason=f"drill {NAME}: the record was planted",
        actor=None,
    )
    trial.quarantine_id = quarantine.quarantine_id
    lift_reason = f"drill {NAME} did not finish: the trial's record is not used again"
    try:
        _quarantined(principal, trial, record.memory_id)
        lift_reason = f"drill {NAME} finished: the trial's record is not used again"
    finally:
        # Pass or fail, the drill leaves no record held: the quarantine is the trial's own
        # (an operator who lifted it meanwhile has done this already).
        with suppress(Conflict):
            quarantine_lift(quarantine_id=quarantine.quarantine_id, reason=lift_reason, actor=None)
    trial.check()
    return trial


def _quarantined(principal: Principal, trial: PoisonedTrial, memory_id: str) -> None:
    """With the record quarantined: what its lineage lists, the later recalls, the replays."""
    quarantine_apply(quarantine_id=trial.quarantine_id)
    trial.steps.append(f"quarantine {trial.quarantine_id} applied")
    trial.listed = memory_fed(memory_id=memory_id)
    trial.citations_before = memory_citations(memory_id=memory_id)
    for commits in COMMITS_AFTER:
        snapshot = _recall(principal, trial, commits)
        trial.later_snapshots.append(snapshot.snapshot_id)
        trial.later_decisions.append(snapshot.decision_receipt.decision_id)
        trial.later_verdicts.append(snapshot.content["claims"][0]["verdict"])
    trial.citations_after = memory_citations(memory_id=memory_id)
    downstream = set(memory_fed(memory_id=memory_id)["snapshot"])
    trial.later_downstream = [ref for ref in trial.later_snapshots if ref in downstream]
    _replay(trial, trial.fed_snapshots + trial.later_snapshots)


def poisoned_memory_report(trials: list[PoisonedTrial]) -> dict[str, Any]:
    """The scenario's part of the drill report (plain JSON)."""
    failures = [f"{trial.subject}: {failure}" for trial in trials for failure in trial.failures]
    return {
        "name": NAME,
        "title": TITLE,
        "trials": len(trials),
        "passed": not failures,
        "failures": failures,
        "blast_radius_complete": not any(
            failure.startswith(MISSED) for trial in trials for failure in trial.failures
        ),
        "snapshots_fed": sum(len(trial.fed_snapshots) for trial in trials),
        "effects_fed": sum(len(trial.fed_effects) for trial in trials),
        "later_decisions": sum(len(trial.later_snapshots) for trial in trials),
        "later_citations": sum(
            verdict != Verdict.QUARANTINED.value
            for trial in trials
            for verdict in trial.later_verdicts
        )
        + sum(len(set(trial.citations_after) - set(trial.citations_before)) for trial in trials),
        "later_downstream": sum(len(trial.later_downstream) for trial in trials),
        "replays": sum(trial.replays for trial in trials),
        "replays_exact": sum(trial.replays_exact for trial in trials),
        "outcome": " → ".join(trials[0].steps) if trials else "",
        "trials_detail": [asdict(trial) for trial in trials],
    }
